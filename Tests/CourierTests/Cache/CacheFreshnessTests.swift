import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Freshness lifetime, age (RFC 9111 §4.2) and how a stored response may answer a request.
struct CacheFreshnessTests {
    static let base = Date(timeIntervalSince1970: 1_700_000_000)

    static func httpDate(_ date: Date) -> String {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return formatter.string(from: date)
    }

    static func entry(
        status: HTTPResponse.Status = .ok,
        _ fields: [(HTTPField.Name, String)],
        requestTime: Date = base,
        responseTime: Date = base
    ) -> CachedResponse {
        var head = HTTPResponse(status: status)
        for (name, value) in fields { head.headerFields.append(HTTPField(name: name, value: value)) }
        return CachedResponse(
            id: 1,
            head: head,
            body: Data("body".utf8),
            requestTime: requestTime,
            responseTime: responseTime,
            request: HTTPRequest(method: .get, scheme: "http", authority: "a", path: "/")
        )
    }

    @Test func maxAgeWinsOverExpires() {
        let entry = Self.entry([
            (.cacheControl, "max-age=60, s-maxage=600"), (.date, Self.httpDate(Self.base)),
            (.expires, Self.httpDate(Self.base + 3600)),
        ])
        #expect(entry.freshnessLifetime == 60, "a private cache ignores s-maxage")
    }

    @Test func expiresMinusDate() {
        let entry = Self.entry([(.date, Self.httpDate(Self.base)), (.expires, Self.httpDate(Self.base + 100))])
        #expect(entry.freshnessLifetime == 100)
        #expect(Self.entry([(.expires, "0")]).freshnessLifetime == 0, "an invalid Expires is stale")
    }

    @Test func heuristicIsATenthOfTheTimeSinceModificationCapped() {
        let date = Self.httpDate(Self.base)
        let entry = Self.entry([(.date, date), (.lastModified, Self.httpDate(Self.base - 1000))])
        #expect(entry.freshnessLifetime == 100)
        let old = Self.entry([(.date, date), (.lastModified, Self.httpDate(Self.base - 100 * 86400))])
        #expect(old.freshnessLifetime == CachedResponse.maximumHeuristicLifetime)
    }

    @Test func heuristicOnlyWhereAllowed() {
        let fields: [(HTTPField.Name, String)] = [
            (.date, Self.httpDate(Self.base)), (.lastModified, Self.httpDate(Self.base - 1000)),
        ]
        #expect(Self.entry(status: .found, fields).heuristicLifetime == nil, "302 is not heuristically cacheable")
        #expect(Self.entry(status: .notFound, fields).heuristicLifetime == 100)
        #expect(Self.entry(fields + [(.cacheControl, "max-age=5")]).heuristicLifetime == nil)
        #expect(Self.entry([(.date, Self.httpDate(Self.base))]).freshnessLifetime == 0, "no Last-Modified")
    }

    /// RFC 9111 §4.2.3: apparent age, Age plus the response delay, resident time.
    @Test func currentAge() {
        let entry = Self.entry(
            [(.date, Self.httpDate(Self.base - 10)), (.age, "3")],
            requestTime: Self.base - 2,
            responseTime: Self.base
        )
        // apparent_age = 10; corrected_age_value = 3 + 2 = 5; corrected_initial_age = 10.
        #expect(entry.correctedInitialAge == 10)
        #expect(entry.currentAge(at: Self.base + 5) == 15)
        let delayed = Self.entry([(.date, Self.httpDate(Self.base)), (.age, "30")], requestTime: Self.base - 4)
        #expect(delayed.correctedInitialAge == 34)
    }

    @Test func uses() {
        let now = Self.base + 100
        let fresh = Self.entry([(.cacheControl, "max-age=200")])
        #expect(CacheRules.use(of: fresh, request: CacheControl(), at: now) == .fresh)
        #expect(CacheRules.use(of: fresh, request: CacheControl(parsing: "max-age=50"), at: now) == .validate)
        #expect(CacheRules.use(of: fresh, request: CacheControl(parsing: "min-fresh=150"), at: now) == .validate)
        #expect(CacheRules.use(of: fresh, request: CacheControl(parsing: "no-cache"), at: now) == .validate)
        let noCache = Self.entry([(.cacheControl, "max-age=200, no-cache")])
        #expect(CacheRules.use(of: noCache, request: CacheControl(), at: now) == .validate)

        let stale = Self.entry([(.cacheControl, "max-age=50, stale-while-revalidate=60")])
        #expect(CacheRules.use(of: stale, request: CacheControl(), at: now) == .staleWhileRevalidating)
        #expect(CacheRules.use(of: stale, request: CacheControl(), at: now + 20) == .validate)
        #expect(CacheRules.use(of: stale, request: CacheControl(parsing: "max-stale=60"), at: now) == .stale)
        #expect(CacheRules.use(of: stale, request: CacheControl(parsing: "max-stale"), at: now + 1000) == .stale)
        let strict = Self.entry([(.cacheControl, "max-age=50, must-revalidate, stale-while-revalidate=60")])
        #expect(CacheRules.use(of: strict, request: CacheControl(parsing: "max-stale"), at: now) == .validate)
    }

    @Test func staleIfError() {
        let entry = Self.entry([(.cacheControl, "max-age=50, stale-if-error=60")])
        #expect(CacheRules.mayServeOnError(entry, request: CacheControl(), at: Self.base + 100))
        #expect(!CacheRules.mayServeOnError(entry, request: CacheControl(), at: Self.base + 200))
        #expect(
            CacheRules.mayServeOnError(entry, request: CacheControl(parsing: "stale-if-error=500"), at: Self.base + 200)
        )
        let plain = Self.entry([(.cacheControl, "max-age=50")])
        #expect(!CacheRules.mayServeOnError(plain, request: CacheControl(), at: Self.base + 100))
        let strict = Self.entry([(.cacheControl, "max-age=50, stale-if-error=60, must-revalidate")])
        #expect(!CacheRules.mayServeOnError(strict, request: CacheControl(), at: Self.base + 100))
    }
}
