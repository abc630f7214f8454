import Foundation
import HTTPTypes

/// The rules of RFC 9111 and RFC 5861 that decide what a cache stores and how it may use it.
enum CacheRules {
    /// The statuses a response may be stored with without explicit freshness, heuristically
    /// cacheable by default (RFC 9110 §15.1), 206 left out: Courier stores no partial content.
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 300, 301, 308, 404, 405, 410, 414, 501]

    /// The statuses Courier stores at all: the heuristically cacheable ones, and the temporary
    /// redirects when explicit directives allow them.
    static let understood: Set<Int> = heuristicallyCacheable.union([302, 307])

    /// The statuses after which a stale response may stand in under `stale-if-error`.
    static let serverErrors: Set<Int> = [500, 502, 503, 504]

    /// Whether a response with `head` to `request` may be stored in `partition`.
    ///
    /// Only a `GET`'s response, with an understood status, neither side `no-store`, never an
    /// event stream, and with something that makes it cacheable (RFC 9111 §3): explicit
    /// freshness, `public`, `private` or a heuristically cacheable status. The shared
    /// partition stores only what a shared cache may: nothing `private`, nothing that sets a
    /// cookie, and for a request with `Authorization` only a response that says a shared cache
    /// may store it (`public`, `s-maxage` or `must-revalidate`, §3.5).
    static func mayStore(_ head: HTTPResponse, for request: HTTPRequest, in partition: CachePartition) -> Bool {
        guard request.method == .get, understood.contains(head.status.code) else { return false }
        let fields = head.headerFields
        let control = CacheControl(fields)
        guard !control.noStore, !CacheControl(request.headerFields).noStore else { return false }
        if let type = fields[.contentType], type.lowercased().hasPrefix("text/event-stream") { return false }
        if partition.isShared {
            guard !control.isPrivate, fields[.setCookie] == nil else { return false }
            if request.headerFields[.authorization] != nil,
                !(control.isPublic || control.sharedMaxAge != nil || control.mustRevalidate)
            {
                return false
            }
        }
        if control.isPublic || control.isPrivate || control.maxAge != nil || fields[.expires] != nil {
            return true
        }
        if partition.isShared, control.sharedMaxAge != nil { return true }
        return heuristicallyCacheable.contains(head.status.code)
    }

    /// How a stored response may answer a request.
    enum Use: Sendable, Hashable {
        /// Fresh: served as it is.
        case fresh
        /// Stale, and the request accepts it (`max-stale`): served as it is.
        case stale
        /// Stale within `stale-while-revalidate`: served as it is and validated in the background.
        case staleWhileRevalidating
        /// Validated before use.
        case validate
    }

    /// How `entry` may answer a request with the directives `request` at `now`.
    static func use(of entry: CachedResponse, request: CacheControl, at now: Date) -> Use {
        let response = entry.control
        guard !response.noCache, !request.noCache else { return .validate }
        let age = entry.currentAge(at: now)
        let lifetime = entry.freshnessLifetime
        if let maxAge = request.maxAge, age > Double(maxAge) { return .validate }
        if let minFresh = request.minFresh, lifetime - age < Double(minFresh) { return .validate }
        if age < lifetime { return .fresh }
        guard !response.mustRevalidate else { return .validate }
        let staleness = age - lifetime
        if let maxStale = request.maxStale, staleness <= Double(maxStale) { return .stale }
        if let window = response.staleWhileRevalidate, staleness <= Double(window) { return .staleWhileRevalidating }
        return .validate
    }

    /// Whether `entry` may stand in at `now` for a validation that failed (RFC 5861 §4): within
    /// the larger `stale-if-error` of the response and the request, and never for a
    /// `must-revalidate` or `no-cache` response.
    static func mayServeOnError(_ entry: CachedResponse, request: CacheControl, at now: Date) -> Bool {
        guard !entry.control.mustRevalidate, !entry.control.noCache else { return false }
        guard let window = [entry.control.staleIfError, request.staleIfError].compactMap({ $0 }).max() else {
            return false
        }
        return entry.currentAge(at: now) - entry.freshnessLifetime <= Double(window)
    }

    /// The header fields a 304 does not replace in a stored response (RFC 9111 §3.2): those
    /// that describe the stored body or the connection.
    static let fieldsKeptOnUpdate: Set<HTTPField.Name> = [
        .contentLength, .contentEncoding, .transferEncoding, .connection, .te, .upgrade, .contentRange,
        HTTPField.Name("Keep-Alive")!,
    ]

    /// The stored header fields `stored` updated with those of a 304's `update` (RFC 9111
    /// §4.3.4): each field the 304 carries replaces the stored one of its name, except
    /// ``fieldsKeptOnUpdate``.
    static func updated(_ stored: HTTPFields, with update: HTTPFields) -> HTTPFields {
        var result = stored
        var replaced = Set<HTTPField.Name>()
        for field in update where !fieldsKeptOnUpdate.contains(field.name) {
            if replaced.insert(field.name).inserted { result[values: field.name] = [] }
            result.append(field)
        }
        return result
    }
}
