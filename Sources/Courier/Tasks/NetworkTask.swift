public import HTTPTypes
import Synchronization

/// A request in flight that can be observed, suspended, resumed and cancelled.
///
/// Create one with ``Session/task(for:body:deadline:logger:)``. It starts at once. Await ``value`` for the
/// response, watch ``events`` for state changes and progress, or read ``downloadProgress`` and
/// ``uploadProgress`` when you need the latest figures:
///
/// ```swift
/// let task = session.task(for: HTTPRequest(method: .get, path: "/large"))
/// for await event in task.events {
///     if case .downloadProgress(let progress) = event { print(progress.fractionCompleted ?? 0) }
/// }
/// let response = try await task.value
/// ```
///
/// Cancelling the Swift task that awaits ``value`` cancels the transfer.
public final class NetworkTask: Sendable, Identifiable {
    /// A task's identity, unique within the process.
    public struct ID: Hashable, Sendable, CustomStringConvertible {
        /// The number behind the id.
        public let rawValue: UInt64

        private static let counter = Atomic<UInt64>(0)

        static func next() -> ID {
            ID(rawValue: counter.wrappingAdd(1, ordering: .relaxed).newValue)
        }

        /// The id as text.
        public var description: String { "task-\(rawValue)" }
    }

    private struct Locked {
        var state: NetworkTask.State = .running
        var response: Response?
        var error: (any Error)?
        var subscribers: [UInt64: AsyncStream<NetworkTask.Event>.Continuation] = [:]
        var nextSubscriber: UInt64 = 0
        var waiters: [CheckedContinuation<Response, any Error>] = []
        var runner: Task<Void, Never>?
        var cancelRequested = false
        var uploadProgress: NetworkTask.Progress?
        var downloadProgress: NetworkTask.Progress?
    }

    /// The task's identity.
    public let id: ID
    /// The request as the caller gave it.
    public let request: HTTPRequest
    let control: TransferControl
    private let locked_state: LockedBox<Locked>

    init(id: ID, request: HTTPRequest, control: TransferControl) {
        self.id = id
        self.request = request
        self.control = control
        self.locked_state = LockedBox(Locked())
    }

    /// Creates a task whose control reports progress to it.
    static func make(request: HTTPRequest) -> NetworkTask {
        let box = WeakBox()
        let control = TransferControl { upload, download in
            if let upload { box.task?.publish(.uploadProgress(upload)) }
            if let download { box.task?.publish(.downloadProgress(download)) }
        }
        let task = NetworkTask(id: .next(), request: request, control: control)
        box.set(task)
        return task
    }

    /// The current state.
    public var state: NetworkTask.State { locked_state.withLock { $0.state } }

    /// The response, once the task has completed with one.
    public var response: Response? { locked_state.withLock { $0.response } }

    /// The error, once the task has failed or was cancelled.
    public var error: (any Error)? { locked_state.withLock { $0.error } }

    /// The latest download progress: reported every 64 KiB, and once more with the whole
    /// body when the transfer completes; `nil` before the first report.
    public var downloadProgress: NetworkTask.Progress? { locked_state.withLock { $0.downloadProgress } }

    /// The latest upload progress, `nil` for a request without a body or before it is sent.
    public var uploadProgress: NetworkTask.Progress? { locked_state.withLock { $0.uploadProgress } }

    /// Cancels the transfer. The task ends in ``NetworkTask/State/cancelled`` unless it had ended.
    public func cancel() {
        let runner = locked_state.withLock { state -> Task<Void, Never>? in
            state.cancelRequested = true
            return state.runner
        }
        runner?.cancel()
    }

    /// Suspends the transfer: no bytes move until ``resume()``.
    public func suspend() {
        guard transition(to: .suspended, from: .running) else { return }
        control.suspend()
    }

    /// Resumes a suspended transfer.
    public func resume() {
        guard transition(to: .running, from: .suspended) else { return }
        control.resume()
    }

    /// The task's events, starting with its current state, buffered without limit.
    ///
    /// Each access returns a new stream; every stream finishes when the task ends.
    public var events: AsyncStream<NetworkTask.Event> { events(bufferingPolicy: .unbounded) }

    /// The task's events, starting with its current state.
    ///
    /// - Parameter bufferingPolicy: What to keep when the consumer is behind.
    /// - Returns: A stream that finishes when the task ends.
    public func events(
        bufferingPolicy: AsyncStream<NetworkTask.Event>.Continuation.BufferingPolicy
    ) -> AsyncStream<NetworkTask.Event> {
        let (stream, continuation) = AsyncStream.makeStream(
            of: NetworkTask.Event.self,
            bufferingPolicy: bufferingPolicy
        )
        let current = locked_state.withLock { state -> NetworkTask.State in
            continuation.yield(.stateChanged(state.state))
            if !state.state.isFinal {
                let key = state.nextSubscriber
                state.nextSubscriber += 1
                state.subscribers[key] = continuation
                continuation.onTermination = { [weak self] _ in
                    _ = self?.locked_state.withLock { $0.subscribers.removeValue(forKey: key) }
                }
            }
            return state.state
        }
        if current.isFinal { continuation.finish() }
        return stream
    }

    /// The response, awaited. Throws the task's error.
    ///
    /// Cancelling the awaiting Swift task cancels this network task.
    public var value: Response {
        get async throws {
            try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let outcome = locked_state.withLock { state -> Result<Response, any Error>? in
                        if let response = state.response { return .success(response) }
                        if let error = state.error { return .failure(error) }
                        state.waiters.append(continuation)
                        return nil
                    }
                    if let outcome { continuation.resume(with: outcome) }
                }
            } onCancel: {
                self.cancel()
            }
        }
    }

    // MARK: Driving the task (Session)

    func start(_ operation: @escaping @Sendable () async throws -> Response) {
        let runner = Task {
            let result: Result<Response, any Error>
            do {
                result = .success(try await operation())
            } catch {
                result = .failure(error)
            }
            self.finish(with: result)
        }
        let cancelNow = locked_state.withLock { state -> Bool in
            state.runner = runner
            return state.cancelRequested
        }
        if cancelNow { runner.cancel() }
    }

    private func finish(with result: Result<Response, any Error>) {
        let (subscribers, waiters, finalState) = locked_state.withLock { state in
            let finalState: NetworkTask.State
            switch result {
            case .success(let response):
                state.response = response
                finalState = .completed
            case .failure(let error):
                state.error = error
                finalState = error is CancellationError ? .cancelled : .completed
            }
            state.state = finalState
            defer {
                state.subscribers = [:]
                state.waiters = []
                state.runner = nil
            }
            return (Array(state.subscribers.values), state.waiters, finalState)
        }
        for subscriber in subscribers {
            subscriber.yield(.stateChanged(finalState))
            subscriber.finish()
        }
        for waiter in waiters { waiter.resume(with: result) }
    }

    private func transition(to new: NetworkTask.State, from old: NetworkTask.State) -> Bool {
        let subscribers = locked_state.withLock { state -> [AsyncStream<NetworkTask.Event>.Continuation]? in
            guard state.state == old else { return nil }
            state.state = new
            return Array(state.subscribers.values)
        }
        guard let subscribers else { return false }
        for subscriber in subscribers { subscriber.yield(.stateChanged(new)) }
        return true
    }

    private func publish(_ event: NetworkTask.Event) {
        let subscribers = locked_state.withLock { state in
            switch event {
            case .uploadProgress(let progress): state.uploadProgress = progress
            case .downloadProgress(let progress): state.downloadProgress = progress
            default: break
            }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.yield(event) }
    }
}

/// Breaks the cycle between a task and the progress handler of its control.
private final class WeakBox: Sendable {
    private let reference = LockedBox<Weak>(Weak())

    private struct Weak {
        weak var task: NetworkTask?
    }

    var task: NetworkTask? { reference.withLock { $0.task } }

    func set(_ task: NetworkTask) {
        reference.withLock { $0.task = task }
    }
}
