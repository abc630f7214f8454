import Foundation
import HTTPTypes

extension CachedResponse {
    /// The longest heuristic freshness Courier gives a response without explicit freshness.
    static let maximumHeuristicLifetime: Double = 24 * 60 * 60

    /// How long the response is fresh, in seconds (RFC 9111 §4.2.1), as a private cache reads
    /// it: `max-age`, else `Expires` − `Date`, else a heuristic (``heuristicLifetime``), else 0.
    /// `s-maxage` counts only in the shared partition (``control``). An `Expires` that is no
    /// date means stale.
    var freshnessLifetime: Double {
        if let maxAge = control.maxAge { return Double(maxAge) }
        let fields = head.headerFields
        if let expires = fields[.expires] {
            guard let expiry = HTTPDate.parse(expires) else { return 0 }
            let date = fields[.date].flatMap(HTTPDate.parse) ?? responseTime
            return max(0, expiry.timeIntervalSince(date))
        }
        return heuristicLifetime ?? 0
    }

    /// The heuristic freshness (RFC 9111 §4.2.2): 10% of the time since `Last-Modified`, at
    /// most ``maximumHeuristicLifetime``; only for a status heuristically cacheable
    /// (RFC 9110 §15.1) and a response without explicit freshness; `nil` otherwise.
    var heuristicLifetime: Double? {
        let fields = head.headerFields
        guard control.maxAge == nil, fields[.expires] == nil,
            CacheRules.heuristicallyCacheable.contains(head.status.code),
            let modified = fields[.lastModified].flatMap(HTTPDate.parse)
        else { return nil }
        let date = fields[.date].flatMap(HTTPDate.parse) ?? responseTime
        return min(max(0, date.timeIntervalSince(modified)) / 10, Self.maximumHeuristicLifetime)
    }

    /// The response's age when it was received (`corrected_initial_age`, RFC 9111 §4.2.3):
    /// the larger of the apparent age (reception − `Date`) and `Age` plus the time the request
    /// took.
    var correctedInitialAge: Double {
        let fields = head.headerFields
        let apparentAge = fields[.date].flatMap(HTTPDate.parse).map { max(0, responseTime.timeIntervalSince($0)) } ?? 0
        let ageValue = fields[.age].flatMap(CacheControl.seconds).map(Double.init) ?? 0
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        return max(apparentAge, ageValue + responseDelay)
    }

    /// The response's age at `now` (`current_age`): its age when received plus the time since.
    func currentAge(at now: Date) -> Double {
        correctedInitialAge + max(0, now.timeIntervalSince(responseTime))
    }
}

/// Reads an HTTP-date in any of its three formats (RFC 9110 §5.6.7).
enum HTTPDate {
    /// The date, or `nil` when `text` is none.
    static func parse(_ text: String) -> Date? {
        RetryAfter.httpDate(text.trimmingCharacters(in: .whitespaces), now: Date())
    }
}
