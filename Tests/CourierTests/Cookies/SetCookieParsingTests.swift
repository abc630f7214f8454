import Foundation
import Testing

@testable import Courier

/// `Set-Cookie` parsing (RFC 6265bis §5.6) and the cookie-date algorithm (§5.1.1).
@Suite struct SetCookieParsingTests {
    private let now = Date(timeIntervalSince1970: 1_700_000_000)
    private let limits = CookieJar.Limits()

    private func parse(_ text: String, limits: CookieJar.Limits = CookieJar.Limits()) -> SetCookie? {
        SetCookie(text, now: now, limits: limits)
    }

    private func date(_ text: String) -> Date? { CookieDate.parse(Substring(text)) }

    private func utc(
        _ year: Int,
        _ month: Int,
        _ day: Int,
        _ hour: Int = 0,
        _ minute: Int = 0,
        _ second: Int = 0
    )
        -> Date
    {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar.date(
            from: DateComponents(year: year, month: month, day: day, hour: hour, minute: minute, second: second)
        )!
    }

    @Test func nameAndValueAreSplitAtTheFirstEqualsAndTrimmed() throws {
        let cookie = try #require(parse("  SID = 31d4=d1 ; Path=/"))
        #expect(cookie.name == "SID")
        #expect(cookie.value == "31d4=d1")
        let valueOnly = try #require(parse("justavalue"))
        #expect(valueOnly.name == "")
        #expect(valueOnly.value == "justavalue")
        let emptyValue = try #require(parse("a="))
        #expect(emptyValue.name == "a" && emptyValue.value == "")
    }

    @Test func everyAttributeIsReadInAnyCase() throws {
        let cookie = try #require(
            parse("a=b; pAtH=/docs; DOMAIN=.Example.COM; secure; HTTPONLY; samesite=LAX; Unknown=1; Flag")
        )
        #expect(cookie.path == "/docs")
        #expect(cookie.domain == "example.com")
        #expect(cookie.isSecure)
        #expect(cookie.isHTTPOnly)
        #expect(cookie.sameSite == .lax)
        #expect(cookie.expires == nil)
        #expect(try #require(parse("a=b; SameSite=Strict")).sameSite == .strict)
        #expect(try #require(parse("a=b; SameSite=None")).sameSite == Cookie.SameSite.none)
        #expect(try #require(parse("a=b; SameSite=Sometimes")).sameSite == nil)
    }

    @Test func theLastOccurrenceOfAnAttributeCounts() throws {
        let cookie = try #require(parse("a=b; Path=/one; Path=/two; Domain=a.com; Domain=b.com"))
        #expect(cookie.path == "/two")
        #expect(cookie.domain == "b.com")
        // A Path that does not start with "/" stands for the default path.
        #expect(try #require(parse("a=b; Path=/one; Path=relative")).path == nil)
        #expect(try #require(parse("a=b; Path=")).path == nil)
    }

    @Test func anEmptyDomainIsIgnored() throws {
        #expect(try #require(parse("a=b; Domain=")).domain == nil)
        #expect(try #require(parse("a=b; Domain=example.com; Domain=")).domain == "example.com")
    }

    @Test func expiresReadsTheRFCsDateForms() throws {
        let expected = utc(2029, 6, 9, 10, 18, 14)
        // Within the 400 days a cookie may live from `now` (2023-11-14).
        #expect(
            try #require(parse("a=b; Expires=Sun, 09 Jun 2024 10:18:14 GMT")).expires == utc(2024, 6, 9, 10, 18, 14)
        )
        #expect(date("Wed, 09 Jun 2029 10:18:14 GMT") == expected)  // RFC 1123
        #expect(date("Wednesday, 09-Jun-29 10:18:14 GMT") == expected)  // RFC 850, two-digit year
        #expect(date("Wed Jun  9 10:18:14 2029") == expected)  // asctime
        #expect(date("09 Jun 2029 10:18:14") == expected)
        #expect(date("10:18:14 2029 jun 9") == expected)  // any order
        #expect(date("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(date("Sun, 06 Nov 1994 08:49:37 GMT") == utc(1994, 11, 6, 8, 49, 37))
    }

    @Test func twoDigitYearsFollowTheRFCWindow() {
        #expect(date("01 Jan 70 00:00:00") == utc(1970, 1, 1))
        #expect(date("01 Jan 99 00:00:00") == utc(1999, 1, 1))
        #expect(date("01 Jan 00 00:00:00") == utc(2000, 1, 1))
        #expect(date("01 Jan 69 00:00:00") == utc(2069, 1, 1))
    }

    @Test func impossibleOrIncompleteDatesAreNoDates() {
        #expect(date("Wed, 09 Jun 2029") == nil)  // no time
        #expect(date("09 2029 10:18:14") == nil)  // no month
        #expect(date("Jun 2029 10:18:14") == nil)  // no day
        #expect(date("32 Jun 2029 10:18:14") == nil)
        #expect(date("31 Jun 2029 10:18:14") == nil)
        #expect(date("29 Feb 2023 10:18:14") == nil)
        #expect(date("29 Feb 2024 10:18:14") == utc(2024, 2, 29, 10, 18, 14))
        #expect(date("09 Jun 2029 24:00:00") == nil)
        #expect(date("09 Jun 2029 10:60:00") == nil)
        #expect(date("09 Jun 1600 10:00:00") == nil)
        #expect(date("09 Jun 12345 10:00:00") == nil)
        #expect(date("") == nil)
        #expect(date("not a date") == nil)
    }

    @Test func anUnreadableExpiresIsIgnored() throws {
        #expect(try #require(parse("a=b; Expires=soon")).expires == nil)
    }

    @Test func maxAgeTakesPrecedenceOverExpiresWhateverTheOrder() throws {
        let first = try #require(parse("a=b; Max-Age=60; Expires=Wed, 09 Jun 2029 10:18:14 GMT"))
        #expect(first.expires == now.addingTimeInterval(60))
        let last = try #require(parse("a=b; Expires=Wed, 09 Jun 2029 10:18:14 GMT; Max-Age=60"))
        #expect(last.expires == now.addingTimeInterval(60))
    }

    @Test func aMaxAgeOfZeroOrLessExpiresAtOnce() throws {
        #expect(try #require(parse("a=b; Max-Age=0")).expires! <= now)
        #expect(try #require(parse("a=b; Max-Age=-1")).expires! <= now)
        #expect(try #require(parse("a=b; Max-Age=-99999999999999999999999")).expires! <= now)
    }

    @Test func aMaxAgeThatIsNoNumberIsIgnored() throws {
        #expect(try #require(parse("a=b; Max-Age=1.5")).expires == nil)
        #expect(try #require(parse("a=b; Max-Age=+5")).expires == nil)
        #expect(try #require(parse("a=b; Max-Age=")).expires == nil)
        #expect(try #require(parse("a=b; Max-Age=-")).expires == nil)
        #expect(try #require(parse("a=b; Max-Age=12a")).expires == nil)
    }

    @Test func lifetimesAreCappedAtTheMaximumAge() throws {
        let cap = now.addingTimeInterval(400 * 86_400)
        #expect(try #require(parse("a=b; Max-Age=999999999999")).expires == cap)
        #expect(try #require(parse("a=b; Expires=Fri, 01 Jan 9999 00:00:00 GMT")).expires == cap)
    }

    @Test func controlCharactersIgnoreTheCookie() {
        #expect(parse("a=b\u{1}") == nil)
        #expect(parse("a=b; Path=/\u{7F}") == nil)
        #expect(parse("a=b\nc") == nil)
        #expect(parse("a=\tb\t") != nil)  // a tab is whitespace, not a control character
    }

    @Test func anEmptyNameAndValueIsIgnored() {
        #expect(parse("=") == nil)
        #expect(parse("; Path=/") == nil)
        #expect(parse("   ") == nil)
    }

    @Test func sizeLimitsIgnoreTheCookieOrTheAttribute() throws {
        let name = String(repeating: "n", count: 2000)
        #expect(parse("\(name)=\(String(repeating: "v", count: 2096))") != nil)
        #expect(parse("\(name)=\(String(repeating: "v", count: 2097))") == nil)
        let longPath = "/" + String(repeating: "p", count: 1024)
        let cookie = try #require(parse("a=b; Path=/short; Path=\(longPath)"))
        #expect(cookie.path == "/short")
        let exact = "/" + String(repeating: "p", count: 1023)
        #expect(try #require(parse("a=b; Path=\(exact)")).path == exact)
    }
}
