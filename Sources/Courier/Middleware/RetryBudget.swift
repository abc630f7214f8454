import Foundation

/// The retries a session may still make: at most a share of its recent requests, plus a few
/// per second (the token bucket of Finagle's and gRPC's retry budgets).
///
/// Recent means the last 10 seconds, kept as ten one-second slots of counts: recording a
/// request or a retry takes the lock, reads the coarse monotonic clock (a few nanoseconds,
/// updated every few milliseconds: plenty for one-second slots) and changes a few integers.
final class RetryBudget: Sendable {
    private let counters = LockedBox(Counters())

    /// Counts a request that may be retried.
    func recordRequest() {
        let second = self.second()
        counters.withLock { $0.recordRequest(at: second) }
    }

    /// Takes one retry from the budget, when it has one.
    ///
    /// - Parameters:
    ///   - ratio: The share of recent requests that may be retried.
    ///   - minimumPerSecond: The retries per second always allowed.
    /// - Returns: Whether the retry may be made.
    func withdraw(ratio: Double, minimumPerSecond: Int) -> Bool {
        let second = self.second()
        return counters.withLock { $0.withdraw(at: second, ratio: ratio, minimumPerSecond: minimumPerSecond) }
    }

    private func second() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &now)
        return Int64(now.tv_sec)
    }

    /// The counts of the window, by second: the arithmetic of the budget, without a clock.
    struct Counters {
        /// The window, in one-second slots.
        static let window = 10

        private var requests = [Int](repeating: 0, count: window)
        private var retries = [Int](repeating: 0, count: window)
        /// The requests and retries of the window.
        private(set) var windowRequests = 0
        private(set) var windowRetries = 0
        /// The second of the newest slot.
        private var current: Int64 = 0

        /// Counts a request in second `second`.
        mutating func recordRequest(at second: Int64) {
            let slot = advance(to: second)
            requests[slot] += 1
            windowRequests += 1
        }

        /// Counts a retry in second `second` when the window allows one more: its retries
        /// stay below `minimumPerSecond × 10 + ratio × its requests`.
        mutating func withdraw(at second: Int64, ratio: Double, minimumPerSecond: Int) -> Bool {
            let slot = advance(to: second)
            let allowed = Double(max(0, minimumPerSecond) * Self.window) + max(0, ratio) * Double(windowRequests)
            guard Double(windowRetries) + 1 <= allowed else { return false }
            retries[slot] += 1
            windowRetries += 1
            return true
        }

        /// Moves the window to end at `second`, forgetting the slots that fell out of it, and
        /// returns the slot of `second`. A second older than the newest slot counts in it.
        private mutating func advance(to second: Int64) -> Int {
            if second > current {
                let stale = min(second - current, Int64(Self.window))
                for step in 1...stale {
                    let slot = Int((current + step) % Int64(Self.window))
                    windowRequests -= requests[slot]
                    windowRetries -= retries[slot]
                    requests[slot] = 0
                    retries[slot] = 0
                }
                current = second
            }
            return Int(current % Int64(Self.window))
        }
    }
}
