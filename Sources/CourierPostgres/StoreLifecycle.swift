#if Postgres
import Courier

/// Where a ``PostgresTokenStore`` is in its life — not yet run, running, draining the calls in
/// flight, stopped — and the tasks that wait for the next step.
///
/// `run()` moves the store along: it starts it, waits for a stop (``requestStop()``, the
/// group's graceful shutdown, cancellation), waits for the calls in flight, and ends the
/// pool. A store is run once: once stopped, it stays stopped.
final class StoreLifecycle: Sendable {
    enum Phase: Equatable {
        /// Not run yet: calls are let through (a pool the caller runs serves them; the
        /// store's own pool serves them as soon as `run()` starts).
        case idle
        /// `run()` runs; calls are served.
        case running
        /// A stop was asked for: new calls are refused, `run()` waits for those in flight.
        case draining
        /// `run()` returned, or the store was stopped before it ran.
        case stopped
    }

    private struct State {
        var phase = Phase.idle
        /// Whether `run()` ever started.
        var hasRun = false
        var inFlight = 0
        var stopWaiter: CheckedContinuation<Void, Never>?
        var drainWaiter: CheckedContinuation<Void, Never>?
        var endWaiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = LockedBox(State())

    var phase: Phase { state.withLock { $0.phase } }

    /// Moves an idle store to running.
    ///
    /// - Returns: `false` when the store was stopped before it ever ran: there is nothing to
    ///   run, and `run()` returns, as a service told to stop before it started does.
    /// - Throws: ``/Courier/CourierError/Kind/shutDown`` when `run()` already ran (a store
    ///   runs once), and ``/Courier/CourierError/Kind/invalidConfiguration`` when it is
    ///   running.
    func start() throws -> Bool {
        let (phase, hadRun) = state.withLock { state -> (Phase, Bool) in
            let before = (state.phase, state.hasRun)
            if state.phase == .idle {
                state.phase = .running
                state.hasRun = true
            }
            return before
        }
        switch phase {
        case .idle:
            return true
        case .running, .draining:
            throw CourierError(.invalidConfiguration, message: "PostgreSQL token store: run() is already running")
        case .stopped where !hadRun:
            return false
        case .stopped:
            throw CourierError(.shutDown, message: "PostgreSQL token store: run() after it ended; a store runs once")
        }
    }

    /// Counts a call in; `false` when the store no longer takes calls.
    func enter() -> Bool {
        state.withLock { state in
            guard state.phase == .idle || state.phase == .running else { return false }
            state.inFlight += 1
            return true
        }
    }

    /// Counts a call out; the last one out of a draining store lets `run()` go on.
    func leave() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.inFlight -= 1
            guard state.inFlight == 0, state.phase == .draining else { return nil }
            defer { state.drainWaiter = nil }
            return state.drainWaiter
        }
        waiter?.resume()
    }

    /// Refuses new calls from now on: a running store drains, an idle one stops at once.
    /// Calling it again does nothing.
    func requestStop() {
        let (stopWaiter, endWaiters) = state.withLock {
            state -> (CheckedContinuation<Void, Never>?, [CheckedContinuation<Void, Never>]) in
            switch state.phase {
            case .idle:
                state.phase = .stopped
                defer { state.endWaiters = [] }
                return (nil, state.endWaiters)
            case .running:
                state.phase = .draining
                defer { state.stopWaiter = nil }
                return (state.stopWaiter, [])
            case .draining, .stopped:
                return (nil, [])
            }
        }
        stopWaiter?.resume()
        for waiter in endWaiters { waiter.resume() }
    }

    /// Returns once a stop was asked for, or the task is cancelled.
    func waitForStopRequest() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.phase != .running || Task.isCancelled { return true }
                    state.stopWaiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.stopWaiter = nil }
                return state.stopWaiter
            }?.resume()
        }
    }

    /// Returns once no call is in flight, or the task is cancelled.
    func waitForDrain() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let now = state.withLock { state -> Bool in
                    if state.inFlight == 0 || Task.isCancelled { return true }
                    state.drainWaiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state -> CheckedContinuation<Void, Never>? in
                defer { state.drainWaiter = nil }
                return state.drainWaiter
            }?.resume()
        }
    }

    /// Marks the end of `run()` and wakes the tasks waiting for it.
    func finish() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.phase = .stopped
            defer { state.endWaiters = [] }
            return state.endWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the store is stopped: at once when it is, or never ran.
    func waitUntilStopped() async {
        await withCheckedContinuation { continuation in
            let now = state.withLock { state -> Bool in
                if state.phase == .stopped { return true }
                state.endWaiters.append(continuation)
                return false
            }
            if now { continuation.resume() }
        }
    }
}
#endif
