import Foundation

/// How long a broker waits after failed renewals before it tries again.
///
/// Exponential with jitter: after the n-th failure in a row the next renewal waits between half
/// and all of `base × 2ⁿ⁻¹`, capped at ``maximum`` — 125–250 ms after the first failure, then
/// 250–500 ms, 0.5–1 s, …, 15–30 s. A success resets it. A 429 or 503 with `Retry-After`
/// makes the wait at least that long, capped at ``maximumRetryAfter``.
struct RenewalBackoff: Sendable, Hashable {
    /// The step after the first failure (250 ms).
    var base: Duration
    /// The longest step (30 seconds).
    var maximum: Duration
    /// The longest `Retry-After` honoured (60 seconds); a server asking for more gets this.
    var maximumRetryAfter: Duration

    /// Creates a backoff.
    ///
    /// - Parameters:
    ///   - base: The step after the first failure.
    ///   - maximum: The longest step.
    ///   - maximumRetryAfter: The longest `Retry-After` honoured.
    init(
        base: Duration = .milliseconds(250),
        maximum: Duration = .seconds(30),
        maximumRetryAfter: Duration = .seconds(60)
    ) {
        self.base = base
        self.maximum = maximum
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// The full step after `failures` failures in a row (no jitter): `base × 2ⁿ⁻¹`, capped.
    func step(afterFailures failures: Int) -> Duration {
        let doublings = min(max(failures, 1) - 1, 40)
        let seconds = base.inSeconds * Double(1 << doublings)
        return .seconds(min(seconds, maximum.inSeconds))
    }

    /// The wait after `failures` failures in a row.
    ///
    /// - Parameters:
    ///   - failures: Failed renewals in a row, at least 1.
    ///   - jitter: A random number in `0...1`: 0 waits half the step, 1 the whole step.
    /// - Returns: The wait.
    func delay(afterFailures failures: Int, jitter: Double) -> Duration {
        let fraction = 0.5 + 0.5 * min(max(jitter, 0), 1)
        return .seconds(step(afterFailures: failures).inSeconds * fraction)
    }
}
