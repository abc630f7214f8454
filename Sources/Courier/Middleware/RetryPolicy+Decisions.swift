import Foundation
import HTTPTypes

extension HTTPField.Name {
    /// `Idempotency-Key`: a request that carries it may be retried whatever its method.
    static let idempotencyKey = HTTPField.Name("Idempotency-Key")!
}

extension RetryPolicy {
    /// Why a request goes again, and after how long.
    struct Retry: Equatable {
        /// How long to wait before the next attempt.
        var wait: Duration
        /// Why, for the log: `status 503`, `connectionClosed`.
        var reason: String
    }

    /// Whether the request may be sent more than once at all: the policy allows a second
    /// attempt, the body can be sent again, and the method is idempotent or the request
    /// carries an `Idempotency-Key`.
    func allowsRetries(of request: HTTPRequest, body: RequestBody?) -> Bool {
        guard maximumAttempts > 1 else { return false }
        if let body, !body.isReplayable { return false }
        return request.method.isIdempotent || request.headerFields[.idempotencyKey] != nil
    }

    /// Whether a failure may be cured by sending again: the connection could not be made, or
    /// it closed or a timeout fired before any byte of a response arrived (a body cut short
    /// or undecodable is not sent for again).
    static func isRetryable(_ error: any Error) -> Bool {
        guard let error = error as? CourierError else { return false }
        switch error.kind {
        case .couldNotConnect, .connectTimedOut: return true
        case .connectionClosed, .timedOut, .stalled: return !error.receivedResponse
        default: return false
        }
    }

    /// The retry after attempt number `attempt` (1 for the first) was answered with
    /// `response`, or `nil` when the response goes to the caller: its status is not retried,
    /// the attempts are used up, or its `Retry-After` asks for more than
    /// ``maximumRetryAfter``.
    ///
    /// - Parameter now: The wall-clock time, read only when a `Retry-After` date needs it.
    func retry<Generator: RandomNumberGenerator>(
        after response: HTTPResponse,
        attempt: Int,
        now: @autoclosure () -> Date,
        using generator: inout Generator
    ) -> Retry? {
        guard retries(response.status), attempt < maximumAttempts else { return nil }
        let reason = "status \(response.status.code)"
        guard let value = response.headerFields[.retryAfter] else {
            return Retry(wait: backoff(retry: attempt, using: &generator), reason: reason)
        }
        guard let asked = RetryAfter.delay(value, now: now()) else {
            return Retry(wait: backoff(retry: attempt, using: &generator), reason: reason)
        }
        guard asked <= maximumRetryAfter else { return nil }
        return Retry(wait: asked, reason: "\(reason), Retry-After \(value)")
    }

    /// The retry after attempt number `attempt` failed with `error`, or `nil` when the error
    /// goes to the caller.
    func retry<Generator: RandomNumberGenerator>(
        after error: any Error,
        attempt: Int,
        using generator: inout Generator
    ) -> Retry? {
        guard attempt < maximumAttempts, Self.isRetryable(error), let error = error as? CourierError else {
            return nil
        }
        return Retry(wait: backoff(retry: attempt, using: &generator), reason: error.kind.name)
    }

    /// The wait before retry number `retry` (1 for the first): random between zero and
    /// `min(maximumBackoff, baseBackoff × 2^(retry − 1))`.
    func backoff<Generator: RandomNumberGenerator>(retry: Int, using generator: inout Generator) -> Duration {
        let base = Self.nanoseconds(baseBackoff)
        let ceiling = min(Self.nanoseconds(maximumBackoff), base * pow(2, Double(max(0, min(retry - 1, 62)))))
        guard ceiling > 0 else { return .zero }
        return .nanoseconds(Int64(Double.random(in: 0...ceiling, using: &generator)))
    }

    private static func nanoseconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return max(0, Double(seconds) * 1e9 + Double(attoseconds) / 1e9)
    }
}
