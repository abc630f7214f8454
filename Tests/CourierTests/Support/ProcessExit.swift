@testable import Courier

/// The exit of a child process the tests started, awaited by any number of waiters: fire it from
/// the process's termination handler.
final class ProcessExit: Sendable {
    private let state = LockedBox<(exited: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    /// Marks the exit and wakes every waiter.
    func fire() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.exited = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns once the process has exited: at once when it has.
    func wait() async {
        await withCheckedContinuation { continuation in
            let exited = state.withLock { state -> Bool in
                if !state.exited { state.waiters.append(continuation) }
                return state.exited
            }
            if exited { continuation.resume() }
        }
    }
}
