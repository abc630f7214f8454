import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// `RetryAfter.delay(_:now:)`: delta-seconds and the three HTTP-date forms.
@Suite(.timeLimit(.minutes(1)))
struct RetryAfterTests {
    /// 1994-11-06 08:49:37 UTC, the date of RFC 9110's examples.
    static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(arguments: [
        ("120", Duration.seconds(120)), ("0", .zero), (" 5\t", .seconds(5)), ("007", .seconds(7)),
    ])
    func deltaSeconds(value: String, expected: Duration) {
        #expect(RetryAfter.delay(value, now: Self.example) == expected)
    }

    @Test(arguments: ["-1", "1.5", "+5", "abc", "", " ", "5s", "1e3", "12 3"])
    func garbageIsNil(value: String) {
        #expect(RetryAfter.delay(value, now: Self.example) == nil)
    }

    @Test func hugeDeltaIsTheLargestDelay() {
        #expect(RetryAfter.delay("99999999999999999999999", now: Self.example) == .seconds(Int64.max))
    }

    @Test(arguments: [
        "Sun, 06 Nov 1994 08:49:37 GMT",  // IMF-fixdate
        "Sunday, 06-Nov-94 08:49:37 GMT",  // RFC 850
        "Sun Nov  6 08:49:37 1994",  // asctime
    ])
    func httpDatesInEveryForm(value: String) {
        let now = Self.example.addingTimeInterval(-90)
        #expect(RetryAfter.delay(value, now: now) == .seconds(90))
    }

    @Test func fractionalNowRoundsTheDelayUp() throws {
        let now = Self.example.addingTimeInterval(-1.25)
        let delay = try #require(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: now))
        #expect(delay >= .milliseconds(1250))
        #expect(delay < .milliseconds(1251))
    }

    @Test func aDateInThePastIsZero() {
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.example.addingTimeInterval(5)) == .zero)
        #expect(RetryAfter.delay("Sun, 06 Nov 1994 08:49:37 GMT", now: Self.example) == .zero)
    }

    @Test func rfc850YearsMoreThanFiftyYearsAheadAreInThePastCentury() throws {
        // In 2026, `-94` is 1994 (2094 is more than 50 years ahead), `-30` is 2030.
        let now = Date(timeIntervalSince1970: 1_780_000_000)  // 2026-05-28
        #expect(RetryAfter.delay("Sunday, 06-Nov-94 08:49:37 GMT", now: now) == .zero)
        let future = try #require(RetryAfter.delay("Wednesday, 06-Nov-30 08:49:37 GMT", now: now))
        #expect(future > .seconds(86_400 * 365 * 4))
    }

    @Test(arguments: [
        "Sun, 31 Feb 1994 08:49:37 GMT",  // no such day
        "Sun, 06 Nov 1994 24:49:37 GMT",  // no such hour
        "Sun, 06 Nov 1994 08:49:37 UTC",  // only GMT
        "Sun, 6 Nov 1994 08:49:37 GMT",  // two-digit day
        "Foo, 06 Nov 1994 08:49:37 GMT",  // no such weekday
        "Sun, 06 Nov 1994 08:49:37 GMT x",  // trailing garbage
        "Sunday, 06 Nov 1994 08:49:37 GMT",  // long weekday, IMF layout
        "Sun, 06 Abc 1994 08:49:37 GMT",  // no such month
    ])
    func invalidDatesAreNil(value: String) {
        #expect(RetryAfter.delay(value, now: Self.example) == nil)
    }
}

/// `RetryPolicy`: what it retries and how long it waits.
@Suite(.timeLimit(.minutes(1)))
struct RetryPolicyTests {
    let now = Date(timeIntervalSince1970: 1_780_000_000)

    @Test func defaultsAndNever() {
        let policy = RetryPolicy.default
        #expect(policy.maximumAttempts == 3)
        #expect(policy.baseBackoff == .milliseconds(100))
        #expect(policy.maximumBackoff == .seconds(10))
        #expect(policy.retriedStatuses == [.tooManyRequests, .badGateway, .serviceUnavailable, .gatewayTimeout])
        #expect(policy.maximumRetryAfter == .seconds(30))
        #expect(policy.retryBudgetRatio == 0.2)
        #expect(policy.minimumRetriesPerSecond == 10)
        #expect(RetryPolicy.never.maximumAttempts == 1)
        #expect(RetryPolicy.never != .default)
        var changed = RetryPolicy.default
        changed.maximumAttempts = 5
        #expect(changed != .default)
        #expect(RetryPolicy.default.maximumAttempts == 3)  // a value: the shared default is unchanged
        changed.maximumAttempts = 3
        #expect(changed == .default)
        #expect(changed.hashValue == RetryPolicy.default.hashValue)
    }

    @Test func onlyIdempotentMethodsOrAnIdempotencyKeyAndReplayableBodies() {
        let policy = RetryPolicy.default
        for method in [HTTPRequest.Method.get, .head, .options, .put, .delete, .trace] {
            #expect(policy.allowsRetries(of: HTTPRequest(method: method, path: "/"), body: nil))
        }
        #expect(!policy.allowsRetries(of: HTTPRequest(method: .post, path: "/"), body: nil))
        #expect(!policy.allowsRetries(of: HTTPRequest(method: .patch, path: "/"), body: nil))
        var keyed = HTTPRequest(method: .post, path: "/")
        keyed.headerFields[HTTPField.Name("Idempotency-Key")!] = "order-7"
        #expect(policy.allowsRetries(of: keyed, body: .string("{}")))
        let stream = RequestBody.stream(AsyncStream<Data> { $0.finish() })
        #expect(!policy.allowsRetries(of: HTTPRequest(method: .put, path: "/"), body: stream))
        #expect(!policy.allowsRetries(of: keyed, body: stream))
        let generated = RequestBody.generated(length: nil) { AsyncStream<Data> { $0.finish() } }
        #expect(policy.allowsRetries(of: HTTPRequest(method: .put, path: "/"), body: generated))
        #expect(!RetryPolicy.never.allowsRetries(of: HTTPRequest(method: .get, path: "/"), body: nil))
    }

    @Test func retriedFailures() {
        #expect(RetryPolicy.isRetryable(CourierError(.couldNotConnect)))
        #expect(RetryPolicy.isRetryable(CourierError(.connectTimedOut)))
        #expect(RetryPolicy.isRetryable(CourierError(.connectionClosed)))
        #expect(RetryPolicy.isRetryable(CourierError(.timedOut)))
        #expect(RetryPolicy.isRetryable(CourierError(.stalled)))
        var late = CourierError(.timedOut)
        late.receivedResponse = true
        #expect(!RetryPolicy.isRetryable(late))
        var stalledBody = CourierError(.stalled)
        stalledBody.receivedResponse = true
        #expect(!RetryPolicy.isRetryable(stalledBody))
        for kind in [
            CourierError.Kind.couldNotResolveHost, .tlsFailure, .pinMismatch, .untrustedHost, .invalidURL,
            .responseTooLarge, .requestBodyFailed, .shutDown, .transportFailure,
        ] {
            #expect(!RetryPolicy.isRetryable(CourierError(kind)), "\(kind)")
        }
        #expect(!RetryPolicy.isRetryable(CancellationError()))
    }

    @Test func statusesRetriedUntilTheAttemptsAreUsedUp() {
        var generator = SeededGenerator(seed: 42)
        let policy = RetryPolicy.default
        func retry(_ status: HTTPResponse.Status, attempt: Int) -> RetryPolicy.Retry? {
            policy.retry(after: HTTPResponse(status: status), attempt: attempt, now: now, using: &generator)
        }
        #expect(retry(.serviceUnavailable, attempt: 1)?.reason == "status 503")
        #expect(retry(.serviceUnavailable, attempt: 2) != nil)
        #expect(retry(.serviceUnavailable, attempt: 3) == nil)
        #expect(retry(.internalServerError, attempt: 1) == nil)
        #expect(retry(.ok, attempt: 1) == nil)
        let closed = policy.retry(after: CourierError(.connectionClosed), attempt: 2, using: &generator)
        #expect(closed?.reason == "connectionClosed")
        #expect(policy.retry(after: CourierError(.connectionClosed), attempt: 3, using: &generator) == nil)
    }

    @Test func retryAfterInBothFormsUpToTheCap() throws {
        var generator = SeededGenerator(seed: 42)
        var policy = RetryPolicy.default
        policy.maximumRetryAfter = .seconds(10)
        func wait(_ retryAfter: String) -> Duration? {
            var response = HTTPResponse(status: .tooManyRequests)
            response.headerFields[.retryAfter] = retryAfter
            return policy.retry(after: response, attempt: 1, now: now, using: &generator)?.wait
        }
        #expect(wait("7") == .seconds(7))
        #expect(wait("10") == .seconds(10))
        #expect(wait("11") == nil)
        #expect(wait("Thu, 28 May 2026 20:26:48 GMT") == .seconds(8))  // now + 8 s
        #expect(wait("Thu, 28 May 2026 20:27:48 GMT") == nil)  // now + 68 s
        // Garbage: the ordinary backoff.
        let backoff = try #require(wait("soon"))
        #expect(backoff <= .milliseconds(100))
    }

    @Test func fullJitterBackoffStaysUnderItsDoublingCeiling() {
        var generator = SeededGenerator(seed: 42)
        let policy = RetryPolicy(baseBackoff: .milliseconds(100), maximumBackoff: .seconds(1))
        for retry in 1...8 {
            let ceiling = min(Duration.seconds(1), Duration.milliseconds(100) * (1 << (retry - 1)))
            var waits: [Duration] = []
            for _ in 0..<200 { waits.append(policy.backoff(retry: retry, using: &generator)) }
            #expect(waits.allSatisfy { $0 >= .zero && $0 <= ceiling }, "retry \(retry)")
            // Full jitter: spread over the whole range, not bunched at the ceiling.
            #expect(waits.contains { $0 < ceiling / 4 }, "retry \(retry)")
            #expect(waits.contains { $0 > ceiling * 3 / 4 }, "retry \(retry)")
        }
        let none = RetryPolicy(baseBackoff: .zero).backoff(retry: 1, using: &generator)
        #expect(none == .zero)
        let late = policy.backoff(retry: 500, using: &generator)
        #expect(late <= .seconds(1))
    }
}

/// Takes a retry from `counters` (a function, so that `#expect` can call it).
private func withdraw(
    _ counters: inout RetryBudget.Counters,
    at second: Int64,
    ratio: Double,
    minimumPerSecond: Int
) -> Bool {
    counters.withdraw(at: second, ratio: ratio, minimumPerSecond: minimumPerSecond)
}

/// The retry budget's arithmetic, without a clock.
@Suite(.timeLimit(.minutes(1)))
struct RetryBudgetTests {
    @Test func aQuietSessionHasTheFloor() {
        var counters = RetryBudget.Counters()
        var allowed = 0
        while counters.withdraw(at: 0, ratio: 0.2, minimumPerSecond: 10) { allowed += 1 }
        #expect(allowed == 100)  // 10 a second over the 10-second window
    }

    @Test func retriesAreAShareOfRecentRequestsPlusTheFloor() {
        var counters = RetryBudget.Counters()
        for _ in 0..<1_000 { counters.recordRequest(at: 3) }
        var allowed = 0
        while counters.withdraw(at: 3, ratio: 0.2, minimumPerSecond: 10) { allowed += 1 }
        #expect(allowed == 300)
        // Each further request earns a fifth of a retry.
        for _ in 0..<4 { counters.recordRequest(at: 3) }
        #expect(!withdraw(&counters, at: 3, ratio: 0.2, minimumPerSecond: 10))
        counters.recordRequest(at: 3)
        #expect(withdraw(&counters, at: 3, ratio: 0.2, minimumPerSecond: 10))
    }

    @Test func theWindowForgetsAfterTenSeconds() {
        var counters = RetryBudget.Counters()
        for _ in 0..<100 { #expect(withdraw(&counters, at: 0, ratio: 0, minimumPerSecond: 10)) }
        #expect(!withdraw(&counters, at: 9, ratio: 0, minimumPerSecond: 10))
        // Second 10: the retries of second 0 left the window.
        #expect(withdraw(&counters, at: 10, ratio: 0, minimumPerSecond: 10))
        #expect(counters.windowRetries == 1)
        for _ in 0..<50 { counters.recordRequest(at: 12) }
        #expect(counters.windowRequests == 50)
        // A long pause empties the window.
        #expect(withdraw(&counters, at: 1_000, ratio: 0, minimumPerSecond: 10))
        #expect(counters.windowRequests == 0)
        #expect(counters.windowRetries == 1)
    }

    @Test func noFloorAndNoShareMeansNoRetries() {
        var counters = RetryBudget.Counters()
        for _ in 0..<100 { counters.recordRequest(at: 0) }
        #expect(!withdraw(&counters, at: 0, ratio: 0, minimumPerSecond: 0))
    }

    @Test func theSharedBudgetIsSafeUnderConcurrency() async {
        let budget = RetryBudget()
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask { for _ in 0..<1_000 { budget.recordRequest() } }
            }
        }
        let allowed = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var count = 0
                    for _ in 0..<1_000 where budget.withdraw(ratio: 0.2, minimumPerSecond: 10) { count += 1 }
                    return count
                }
            }
            return await group.reduce(0, +)
        }
        // 8,000 requests: 1,600 + the floor, unless a second passed and moved the window (never
        // below what the requests earned).
        #expect(allowed >= 1_600 && allowed <= 1_700)
    }
}
