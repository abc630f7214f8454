import Synchronization

/// Watches one connection of an event stream: when no event, blank line or comment arrived for
/// the idle timeout, it calls its `onIdle` once (which closes the connection).
///
/// The reader notes activity with ``touch()``, an atomic store; a task of the watchdog's own
/// sleeps until the last activity plus the timeout, and sleeps again when there was some since.
/// While the consumer holds an event (``pause()``), the clock stands still: a slow consumer has
/// paused the transfer, so the connection cannot show activity, and is not idle for it.
final class EventStreamWatchdog: Sendable {
    /// The last activity, in nanoseconds from `ContinuousClock.reference`.
    private let lastActivity: Atomic<Int64>
    /// Whether the consumer holds an event, so that idleness is not counted.
    private let paused = Atomic<Bool>(false)
    /// Whether the timeout passed and `onIdle` ran.
    private let fired = Atomic<Bool>(false)
    /// The sleeping task.
    private let task = Mutex<Task<Void, Never>?>(nil)

    /// Starts watching, counting from now.
    ///
    /// - Parameters:
    ///   - timeout: The longest the connection may go without activity.
    ///   - onIdle: Runs once, on the watchdog's task, when the timeout passes.
    init(timeout: Duration, onIdle: @escaping @Sendable () -> Void) {
        lastActivity = Atomic(Self.now())
        // Holds the watchdog weakly: one whose reader is gone stops with it.
        let watching = Task { [weak self] in
            while !Task.isCancelled {
                guard let deadline = self?.deadline(after: timeout) else { return }
                if ContinuousClock.now >= deadline {
                    guard self?.fire() == true else { return }
                    onIdle()
                    return
                }
                try? await Task.sleep(until: deadline, tolerance: .milliseconds(50), clock: .continuous)
            }
        }
        task.withLock { $0 = watching }
    }

    /// Notes that the connection is alive, or that the consumer is back for more: the clock
    /// starts again from now.
    func touch() {
        lastActivity.store(Self.now(), ordering: .relaxed)
        paused.store(false, ordering: .relaxed)
    }

    /// Stops the clock while the consumer holds an event, until the next ``touch()``.
    func pause() {
        paused.store(true, ordering: .relaxed)
    }

    /// Whether the timeout passed: the connection was closed for being idle.
    var hasFired: Bool { fired.load(ordering: .sequentiallyConsistent) }

    /// Stops watching.
    func stop() {
        task.withLock { $0 }?.cancel()
    }

    deinit { stop() }

    /// When the connection counts as idle if nothing arrives before.
    private func deadline(after timeout: Duration) -> ContinuousClock.Instant {
        if paused.load(ordering: .relaxed) { return .now + timeout }
        return ContinuousClock.reference + .nanoseconds(lastActivity.load(ordering: .relaxed)) + timeout
    }

    /// Marks the timeout as passed; `false` when it already was.
    private func fire() -> Bool {
        !fired.exchange(true, ordering: .sequentiallyConsistent)
    }

    /// Now, in nanoseconds from `ContinuousClock.reference`.
    private static func now() -> Int64 {
        Int64(ContinuousClock.sinceReference.nanoseconds)
    }
}
