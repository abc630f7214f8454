import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// What a validation may do to the stored state: never join a validation of another response,
/// never store what the 304 made unstorable, never bring back what was invalidated meanwhile.
/// The network is a closure here (the server's side is tested in CacheIntegrationTests).
struct CacheValidationStateTests {
    typealias Storage = CacheStorageTests

    static func context() -> MiddlewareContext {
        MiddlewareContext(
            taskID: .next(),
            logger: Session.silentLogger,
            options: TransferOptions(),
            control: .none
        )
    }

    /// A stored response that needs validation: stale at once, with an entity tag.
    static let staleWithTag: [(HTTPField.Name, String)] = [(.cacheControl, "max-age=0"), (.eTag, "\"v1\"")]

    @Test func aValidationInFlightIsNeverJoinedForAResponseStoredAfterRemoveAll() throws {
        let cache = HTTPCache()
        let first = try #require(Storage.store(cache, Storage.request("/profile"), Self.staleWithTag))
        let key = CacheKey(Storage.request("/profile"), partition: .shared)!
        let flight = try #require(cache.revalidation(of: first, key: key))
        #expect(flight.isNew)
        cache.removeAll()
        let other = CachePartition(credential: "someone else")
        let second = try #require(
            Storage.store(cache, Storage.request("/account"), partition: other, Self.staleWithTag)
        )
        #expect(second.id != first.id)
        let secondKey = CacheKey(Storage.request("/account"), partition: other)!
        #expect(try #require(cache.revalidation(of: second, key: secondKey)).isNew)
        cache.finish(first.id, with: .failure(CancellationError()))
        cache.finish(second.id, with: .failure(CancellationError()))
    }

    /// Validates `entry` against a server that answers with `answer`, with `between` run
    /// before it answers.
    static func validate(
        _ cache: HTTPCache,
        _ entry: CachedResponse,
        answer: HTTPResponse,
        between: @escaping @Sendable () -> Void = {}
    ) async throws -> Response {
        let request = Storage.request("/profile")
        let exchange = CacheExchange(
            cache: cache,
            request: request,
            key: CacheKey(request, partition: .shared)!,
            control: CacheControl(request.headerFields)
        )
        return try await exchange.validate(entry, context: Self.context()) { _, _, _ in
            between()
            return Response(head: answer)
        }.get()
    }

    @Test func aNotModifiedThatSetsACookieIsNotKeptInTheSharedPartition() async throws {
        let cache = HTTPCache()
        let entry = try #require(Storage.store(cache, Storage.request("/profile"), Self.staleWithTag))
        let answer = Storage.head(.notModified, [(.eTag, "\"v1\""), (.setCookie, "sid=abc")])
        let response = try await Self.validate(cache, entry, answer: answer)
        #expect(response.cacheStatus == .revalidated)
        #expect(Storage.lookup(cache, Storage.request("/profile")) == nil)
    }

    @Test func aNotModifiedThatArrivesAfterAnInvalidationDoesNotBringTheResponseBack() async throws {
        let cache = HTTPCache()
        let entry = try #require(Storage.store(cache, Storage.request("/profile"), Self.staleWithTag))
        let key = CacheKey(Storage.request("/profile"), partition: .shared)!
        let answer = Storage.head(.notModified, [(.eTag, "\"v1\""), (.cacheControl, "max-age=60")])
        _ = try await Self.validate(cache, entry, answer: answer) { cache.invalidate(key) }
        #expect(Storage.lookup(cache, Storage.request("/profile")) == nil)
    }

    @Test func aNotModifiedUpdatesTheStoredResponseWhenItMay() async throws {
        let cache = HTTPCache()
        let entry = try #require(Storage.store(cache, Storage.request("/profile"), Self.staleWithTag))
        let answer = Storage.head(.notModified, [(.eTag, "\"v1\""), (.cacheControl, "max-age=60")])
        _ = try await Self.validate(cache, entry, answer: answer)
        let stored = try #require(Storage.lookup(cache, Storage.request("/profile")))
        #expect(stored.head.headerFields[.cacheControl] == "max-age=60")
    }

    @Test func sMaxAgeIsTheLifetimeInTheSharedPartitionOnly() throws {
        let cache = HTTPCache()
        let fields: [(HTTPField.Name, String)] = [(.cacheControl, "max-age=300, s-maxage=0"), (.eTag, "\"v1\"")]
        let shared = try #require(Storage.store(cache, Storage.request("/a"), fields))
        let user = CachePartition(credential: "Bearer a")
        let own = try #require(Storage.store(cache, Storage.request("/a"), partition: user, fields))
        let now = Date()
        #expect(CacheRules.use(of: shared, request: CacheControl(HTTPFields()), at: now) == .validate)
        #expect(CacheRules.use(of: own, request: CacheControl(HTTPFields()), at: now) == .fresh)
    }
}
