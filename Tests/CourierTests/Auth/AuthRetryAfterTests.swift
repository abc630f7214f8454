import Foundation
import Testing

@testable import Courier

/// `Retry-After` in both forms (RFC 9110 §10.2.3), and what is not one.
@Suite struct AuthRetryAfterTests {
    /// 2027-01-15T08:00:00Z, a Friday.
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func deltaSeconds() {
        #expect(RetryAfter.delay("120", now: now) == .seconds(120))
        #expect(RetryAfter.delay("0", now: now) == .zero)
        #expect(RetryAfter.delay(" 7 ", now: now) == .seconds(7))
        #expect(RetryAfter.delay("99999999999999999999999", now: now) == .seconds(Int64.max))
    }

    @Test(arguments: ["", " ", "-5", "+5", "1.5", "5s", "soon", "0x10", "١٢", "Fri, 15 Jan 2027 08:00:00 CET"])
    func garbageIsNil(value: String) {
        #expect(RetryAfter.delay(value, now: now) == nil)
    }

    @Test func theThreeDateFormats() {
        #expect(RetryAfter.delay("Fri, 15 Jan 2027 08:00:30 GMT", now: now) == .seconds(30))
        #expect(RetryAfter.delay("Friday, 15-Jan-27 08:01:00 GMT", now: now) == .seconds(60))
        #expect(RetryAfter.delay("Fri Jan 15 08:00:05 2027", now: now) == .seconds(5))
        #expect(RetryAfter.delay("Fri Jan  5 08:00:00 2027", now: now.addingTimeInterval(-10 * 86400)) == .zero)
    }

    @Test func aDateInThePastIsZero() {
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: now) == .zero)
        #expect(RetryAfter.delay("Fri, 15 Jan 2027 08:00:00 GMT", now: now) == .zero)
    }

    @Test func aDateIsMeasuredToTheMillisecond() {
        #expect(
            RetryAfter.delay("Fri, 15 Jan 2027 08:00:01 GMT", now: now.addingTimeInterval(0.4)) == .milliseconds(600)
        )
    }

    @Test(arguments: [
        "Fri, 31 Feb 2027 08:00:00 GMT", "Fri, 15 Jan 2027 24:00:00 GMT", "Fri, 15 Foo 2027 08:00:00 GMT",
        "Fri, 15 Jan 27 08:00:00 GMT", "Xyz, 15 Jan 2027 08:00:00 GMT", "Fri, 15 Jan 2027 08:00 GMT",
        "Friday, 15-Jan-2027 08:00:00 GMT", "Fri Jan 15 08:00:05",
    ])
    func malformedDatesAreNil(value: String) {
        #expect(RetryAfter.delay(value, now: now) == nil)
    }

    @Test func twoDigitYearsMoreThanFiftyYearsAheadAreInThePast() {
        // From 2027, "-94" is 1994 (2094 would be 67 years ahead): long past.
        #expect(RetryAfter.delay("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == .zero)
    }
}
