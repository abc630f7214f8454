/// The one outcome of work that many callers await: a token renewal, a cached response's
/// validation.
///
/// Each waiter can stop waiting when its own task is cancelled — it gets `CancellationError` —
/// without affecting the work or the other waiters. ``complete(_:)`` answers every waiter once;
/// later completions are ignored.
final class SharedOutcome<Value: Sendable>: Sendable {
    private struct State {
        var result: Result<Value, any Error>?
        var waiters: [UInt64: CheckedContinuation<Value, any Error>] = [:]
        var nextWaiter: UInt64 = 0
    }

    private let locked_state = LockedBox(State())

    /// An outcome not yet in.
    init() {}

    /// Whether the outcome is in.
    var isCompleted: Bool { locked_state.withLock { $0.result != nil } }

    /// How many callers are waiting right now.
    var waiterCount: Int { locked_state.withLock { $0.waiters.count } }

    /// The outcome, awaited; `CancellationError` when the waiting task is cancelled first.
    func value() async throws -> Value {
        let id = locked_state.withLock { state -> UInt64 in
            defer { state.nextWaiter += 1 }
            return state.nextWaiter
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = locked_state.withLock { state -> Result<Value, any Error>? in
                    if let result = state.result { return result }
                    // The flag is set before the cancellation handler runs, so either the
                    // handler finds this waiter or this check sees the cancellation.
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.waiters[id] = continuation
                    return nil
                }
                if let immediate { continuation.resume(with: immediate) }
            }
        } onCancel: {
            let continuation = locked_state.withLock { $0.waiters.removeValue(forKey: id) }
            continuation?.resume(throwing: CancellationError())
        }
    }

    /// Answers every waiter; does nothing when already completed.
    func complete(_ result: Result<Value, any Error>) {
        let waiters = locked_state.withLock { state -> [CheckedContinuation<Value, any Error>] in
            guard state.result == nil else { return [] }
            state.result = result
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in waiters { waiter.resume(with: result) }
    }
}
