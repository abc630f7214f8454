#if Postgres
import Courier

/// Runs `operation` in a task of its own and returns what it returns, unless `limit` passes
/// first: then the operation is cancelled and left to wind down in the background, and
/// `timeoutError` is thrown at once. Cancelling the caller cancels the operation and throws
/// `CancellationError` at once.
///
/// A task group would wait for the cancelled operation to finish, and a query a database
/// never answers may not finish for minutes: the caller must not wait for it.
func withDeadline<Result: Sendable>(
    _ limit: Duration,
    timeoutError: @escaping @Sendable () -> any Error,
    _ operation: @escaping @Sendable () async throws -> Result
) async throws -> Result {
    let race = DeadlineRace<Result>()
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            guard race.install(continuation) else { return }
            let work = Task {
                do {
                    race.finish(.success(try await operation()))
                } catch {
                    race.finish(.failure(error))
                }
            }
            let timer = Task {
                try? await Task.sleep(for: limit)
                race.finish(.failure(timeoutError()))
            }
            race.track(work, timer)
        }
    } onCancel: {
        race.finish(.failure(CancellationError()))
    }
}

/// The one continuation of ``withDeadline(_:timeoutError:_:)``, resumed by the first of the
/// operation, the timer and cancellation; the other two tasks are then cancelled.
private final class DeadlineRace<Result: Sendable>: Sendable {
    private struct State {
        var continuation: CheckedContinuation<Result, any Error>?
        var outcome: Swift.Result<Result, any Error>?
        var tasks: [Task<Void, Never>] = []
    }

    private let state = LockedBox(State())

    /// Keeps the continuation; `false` (and resumed) when the race was decided before.
    func install(_ continuation: CheckedContinuation<Result, any Error>) -> Bool {
        let outcome = state.withLock { state -> Swift.Result<Result, any Error>? in
            if let outcome = state.outcome { return outcome }
            state.continuation = continuation
            return nil
        }
        guard let outcome else { return true }
        continuation.resume(with: outcome)
        return false
    }

    /// Keeps the tasks to cancel when the race is decided; cancels them when it was.
    func track(_ tasks: Task<Void, Never>...) {
        let decided = state.withLock { state -> Bool in
            if state.outcome != nil { return true }
            state.tasks += tasks
            return false
        }
        if decided {
            for task in tasks { task.cancel() }
        }
    }

    /// Decides the race, unless it was decided before.
    func finish(_ outcome: Swift.Result<Result, any Error>) {
        typealias Decided = (CheckedContinuation<Result, any Error>?, [Task<Void, Never>])
        let (continuation, tasks) = state.withLock { state -> Decided in
            guard state.outcome == nil else { return (nil, []) }
            state.outcome = outcome
            defer {
                state.continuation = nil
                state.tasks = []
            }
            return (state.continuation, state.tasks)
        }
        for task in tasks { task.cancel() }
        continuation?.resume(with: outcome)
    }
}
#endif
