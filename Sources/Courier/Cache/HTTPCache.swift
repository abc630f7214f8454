import Foundation
import HTTPTypes

/// A private HTTP cache in memory (RFC 9111, with `stale-while-revalidate` and
/// `stale-if-error` of RFC 5861), for ``Session/Configuration/cache``.
///
/// Responses are stored by credential: a response to a request that carried one
/// (`Authorization`, `Proxy-Authorization` or `Cookie`) is stored and served only for requests
/// with the same credential; requests without one share what a shared cache may hold, so a
/// `private` response is never served to anyone else. The cache holds at most its
/// ``maximumBytes`` (bodies and header fields); a response larger than an eighth of it is not
/// stored, and the least recently used responses go first.
///
/// ```swift
/// var configuration = Session.Configuration()
/// configuration.cache = HTTPCache(maximumBytes: 64 << 20)
/// ```
///
/// One cache may serve several sessions; it is safe to use from any task.
public final class HTTPCache: Sendable {
    /// The most bytes the cache holds.
    public let maximumBytes: Int
    /// The stored responses, behind the lock.
    private let locked_table = LockedBox(CacheTable())
    /// The validations in flight, by the id of the response they validate. Taken before
    /// `locked_table` when both are held.
    private let locked_flights = LockedBox([UInt64: SharedRevalidation]())

    /// Creates an empty cache.
    ///
    /// - Parameter maximumBytes: The most bytes it holds (32 MiB by default); a response larger
    ///   than an eighth of it is not stored.
    public init(maximumBytes: Int = 32 << 20) {
        self.maximumBytes = max(0, maximumBytes)
    }

    /// The largest response stored: an eighth of ``maximumBytes``.
    var entryLimit: Int { maximumBytes / 8 }

    /// The bytes the stored responses hold: bodies and header fields, roughly.
    public var storedBytes: Int { locked_table.withLock { $0.bytes } }

    /// Removes every stored response.
    public func removeAll() {
        locked_table.withLock { $0 = CacheTable() }
    }

    /// Removes every response stored in `partition`, as a logout does.
    func removeAll(in partition: CachePartition) {
        locked_table.withLock { $0.removeAll(in: partition) }
    }

    /// The response stored under `key` that a request with `fields` selects.
    func lookup(_ key: CacheKey, fields: HTTPFields) -> CachedResponse? {
        locked_table.withLock { $0.lookup(key, fields: fields) }
    }

    /// Stores a response received at `responseTime` for `request`, sent at `requestTime`,
    /// replacing the stored one of the same variant. A response larger than ``entryLimit`` is
    /// not stored, and removes that variant instead.
    ///
    /// - Returns: The stored response, or `nil` when it was too large.
    @discardableResult
    func store(
        _ head: HTTPResponse,
        body: Data,
        trailerFields: HTTPFields = HTTPFields(),
        for request: HTTPRequest,
        key: CacheKey,
        requestTime: Date,
        responseTime: Date
    ) -> CachedResponse? {
        locked_table.withLock { table in
            let entry = CachedResponse(
                id: table.makeID(),
                head: head,
                body: body,
                trailerFields: trailerFields,
                requestTime: requestTime,
                responseTime: responseTime,
                request: request,
                isShared: key.partition.isShared
            )
            guard entry.byteCount <= entryLimit else {
                if let old = table.variants[key]?.first(where: { $0.variance == entry.variance }) {
                    table.remove(id: old.id, key: key)
                }
                return nil
            }
            table.store(entry, for: key, limit: maximumBytes)
            return entry
        }
    }

    /// Whether the response `id` is still stored under `key`: not replaced, evicted,
    /// invalidated or removed.
    func contains(id: UInt64, key: CacheKey) -> Bool {
        locked_table.withLock { $0.variants[key]?.contains { $0.id == id } ?? false }
    }

    /// Removes the stored response `id` of `key`.
    func remove(id: UInt64, key: CacheKey) {
        locked_table.withLock { $0.remove(id: id, key: key) }
    }

    /// Removes every response of the URL of `key`, in every partition, for every method.
    func invalidate(_ key: CacheKey) {
        locked_table.withLock { $0.removeAll(target: key.target, in: nil) }
    }

    /// The validation of the stored response `entry` in flight, and whether the caller must
    /// start it (`true` when there was none; the caller then runs it and calls
    /// ``finish(_:with:)``); `nil` when `entry` is no longer stored under `key` (a validation
    /// just replaced it: look it up again).
    func revalidation(of entry: CachedResponse, key: CacheKey) -> (flight: SharedRevalidation, isNew: Bool)? {
        let id = entry.id
        return locked_flights.withLock { flights in
            if let flight = flights[id] { return (flight, false) }
            guard contains(id: id, key: key) else { return nil }
            let flight = SharedRevalidation()
            flights[id] = flight
            return (flight, true)
        }
    }

    /// Ends the validation of `id` with `result`: every caller waiting for it gets it.
    func finish(_ id: UInt64, with result: Result<Response, any Error>) {
        let flight = locked_flights.withLock { $0.removeValue(forKey: id) }
        flight?.complete(result)
    }

    /// How many callers wait for validations in flight right now.
    var revalidationWaiters: Int {
        locked_flights.withLock { $0.values.reduce(0) { $0 + $1.waiterCount } }
    }
}
