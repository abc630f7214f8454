import Courier
import Dispatch
import Foundation

/// A thread of its own that owns one ``SQLiteConnection`` and runs, one at a time and in order,
/// the jobs callers hand it, so that SQLite's blocking calls — disk reads, `fsync`, waiting for
/// another process's lock — never hold a thread of Swift's cooperative pool.
///
/// A caller awaits its job through a continuation. When the caller's task is cancelled:
///
/// - a job still queued is dropped, and the caller gets `CancellationError` at once;
/// - a job waiting for another connection's lock stops waiting (its transaction is rolled
///   back: nothing of it is written), and the caller gets `CancellationError`;
/// - a job past that point finishes, and the caller gets its result: what is written is
///   written.
///
/// The connection is opened by the first job, and again by the next one when opening failed.
final class SQLiteWorker: Sendable {
    /// A job's place in its life. Changed only with the worker's lock held.
    private enum Phase {
        /// Made, not yet queued: its caller is about to queue it.
        case made
        case queued
        case running
        /// Its caller was answered.
        case finished
    }

    /// One caller's work and its continuation.
    // `@unchecked`: `phase` and `cancelRequested` are read and written with the worker's lock
    // held; the rest is constant.
    private final class Job: @unchecked Sendable {
        /// Runs the work on the worker's thread and answers the caller: with the connection,
        /// or with the error that stands in for it (`nil` for both: the caller was cancelled).
        let work: (SQLiteConnection?, (any Error)?) -> Void
        /// Answers the caller with an error, from any thread, for a job that never ran.
        let fail: (any Error) -> Void
        var phase = Phase.made
        /// Set when the caller was cancelled while the job was being made or ran: a job being
        /// made is not queued, and the busy handler stops waiting for a running one.
        var cancelRequested = false

        init(work: @escaping (SQLiteConnection?, (any Error)?) -> Void, fail: @escaping (any Error) -> Void) {
            self.work = work
            self.fail = fail
        }
    }

    /// What the callers and the thread share, behind ``state``'s lock.
    private struct State {
        /// The jobs waiting for the thread, oldest first.
        var queue: [Job] = []
        /// The job the thread runs now.
        var running: Job?
        /// Whether a stop was asked for: no new jobs; the thread ends once the queue is empty.
        var isStopping = false
        /// The callers of ``stop()`` waiting for the connection to close.
        var stopped: [CheckedContinuation<Void, Never>] = []
        /// Whether the thread has ended.
        var hasStopped = false
        /// When the current wait for a lock began (the busy handler's first call for it).
        var busySince: ContinuousClock.Instant?
        /// Whether the busy handler gave up because the caller was cancelled.
        var gaveUpForCancellation = false
    }

    private let state = LockedBox(State())
    /// Signalled once per queued job and per stop: the thread waits on it when idle.
    private let wakeup = DispatchSemaphore(value: 0)
    /// How long a job waits for another connection's lock before it fails with `SQLITE_BUSY`.
    let busyTimeout: Duration
    /// Opens the connection, on the thread.
    private let open: @Sendable (SQLiteConnection.BusyHandler) throws -> SQLiteConnection

    /// Starts the thread.
    ///
    /// - Parameters:
    ///   - name: The thread's name, for debuggers.
    ///   - busyTimeout: How long a job waits for another connection's lock.
    ///   - open: Opens the connection, with the busy handler it must install.
    init(
        name: String,
        busyTimeout: Duration,
        open: @escaping @Sendable (SQLiteConnection.BusyHandler) throws -> SQLiteConnection
    ) {
        self.busyTimeout = busyTimeout
        self.open = open
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Runs `body` with the connection on the worker's thread.
    ///
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws, the ``SQLiteFailure`` of opening the connection,
    ///   `CancellationError` (see the type's documentation), or
    ///   ``/Courier/CourierError/Kind/shutDown`` after ``stop()``.
    func perform<Value: Sendable>(
        _ body: @escaping @Sendable (SQLiteConnection) throws -> Value
    ) async throws -> Value {
        let made = LockedBox<Job?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
                let job = Job(
                    work: { [self] connection, failure in
                        do {
                            if let failure { throw failure }
                            guard let connection else { throw CancellationError() }
                            continuation.resume(returning: try body(connection))
                        } catch {
                            // SQLITE_BUSY because the busy handler stopped waiting for a
                            // cancelled caller: the caller hears of its cancellation.
                            let cancelled = state.withLock { state -> Bool in
                                defer { state.gaveUpForCancellation = false }
                                return state.gaveUpForCancellation
                            }
                            continuation.resume(throwing: cancelled ? CancellationError() : error)
                        }
                    },
                    fail: { continuation.resume(throwing: $0) }
                )
                made.withLock { $0 = job }
                // Checked after the job is where the cancellation handler looks for it: a
                // cancellation that came earlier, and found no job there, is seen here.
                enqueue(job, cancelled: Task.isCancelled)
            }
        } onCancel: {
            if let job = made.withLock({ $0 }) { cancel(job) }
        }
    }

    /// Asks the thread to finish the jobs already queued, close the connection and end; new
    /// jobs are refused with ``/Courier/CourierError/Kind/shutDown``. Returns once the connection
    /// is closed.
    func stop() async {
        await withCheckedContinuation { continuation in
            let done = state.withLock { state -> Bool in
                if state.hasStopped { return true }
                state.stopped.append(continuation)
                state.isStopping = true
                return false
            }
            if done { continuation.resume() } else { wakeup.signal() }
        }
    }

    /// Asks the thread to end once its queue is empty, without waiting.
    func stopSoon() {
        state.withLock { $0.isStopping = true }
        wakeup.signal()
    }

    /// Queues `job` for the thread, or answers it at once: cancelled, or refused after a stop.
    private func enqueue(_ job: Job, cancelled: Bool) {
        enum Outcome { case queued, cancelled, refused }
        let outcome = state.withLock { state -> Outcome in
            // Cancelled before it was queued: `cancel(_:)` saw it being made and left it here.
            if cancelled || job.cancelRequested { return .cancelled }
            guard !state.isStopping else { return .refused }
            job.phase = .queued
            state.queue.append(job)
            return .queued
        }
        switch outcome {
        case .queued: wakeup.signal()
        case .cancelled: finish(job) { job.fail(CancellationError()) }
        case .refused: finish(job) { job.fail(CourierError(.shutDown, message: "the SQLite token store was closed")) }
        }
    }

    /// The caller of `job` was cancelled: drops the job if it is queued, and marks it so that
    /// it is not queued or, running, stops waiting for a lock.
    private func cancel(_ job: Job) {
        let drop = state.withLock { state -> Bool in
            switch job.phase {
            case .made:
                job.cancelRequested = true
                return false
            case .queued:
                state.queue.removeAll { $0 === job }
                return true
            case .running:
                job.cancelRequested = true
                return false
            case .finished:
                return false
            }
        }
        if drop { finish(job) { job.fail(CancellationError()) } }
    }

    /// Marks `job` finished and answers its caller with `answer`, once.
    private func finish(_ job: Job, _ answer: () -> Void) {
        let first = state.withLock { _ -> Bool in
            guard job.phase != .finished else { return false }
            job.phase = .finished
            return true
        }
        if first { answer() }
    }

    // MARK: The thread

    /// The thread's loop: runs the queued jobs in order, opening the connection for the first,
    /// until asked to stop with an empty queue; then closes the connection.
    private func run() {
        var connection: SQLiteConnection?
        while true {
            wakeup.wait()
            while let (job, cancelled) = next() {
                if cancelled {
                    job.work(nil, nil)
                } else if let connection {
                    job.work(connection, nil)
                } else {
                    do {
                        let opened = try open(busyHandler)
                        connection = opened
                        job.work(opened, nil)
                    } catch {
                        job.work(nil, error)
                    }
                }
                done(job)
            }
            let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>]? in
                guard state.isStopping, state.queue.isEmpty else { return nil }
                state.hasStopped = true
                defer { state.stopped = [] }
                return state.stopped
            }
            if let waiters {
                connection = nil  // closes it
                for waiter in waiters { waiter.resume() }
                return
            }
        }
    }

    /// Takes the next queued job and marks it running.
    ///
    /// - Returns: The job, and whether its caller was cancelled already; `nil` when the queue
    ///   is empty.
    private func next() -> (Job, cancelled: Bool)? {
        state.withLock { state in
            guard !state.queue.isEmpty else { return nil }
            let job = state.queue.removeFirst()
            job.phase = .running
            state.running = job
            state.busySince = nil
            state.gaveUpForCancellation = false
            return (job, job.cancelRequested)
        }
    }

    /// Marks the running `job` finished.
    private func done(_ job: Job) {
        state.withLock { state in
            job.phase = .finished
            state.running = nil
            state.busySince = nil
        }
    }

    /// Whether the running job has waited for another connection's lock (it may have got
    /// it since): for tests that hold a lock and need to know that the store reached it.
    var isWaitingForALock: Bool {
        state.withLock { $0.running != nil && $0.busySince != nil }
    }

    // MARK: Waiting for locks

    /// The busy handler each connection of this worker installs.
    private var busyHandler: SQLiteConnection.BusyHandler {
        SQLiteConnection.BusyHandler(
            callback: Self.busyCallback,
            context: Unmanaged.passUnretained(self).toOpaque()
        )
    }

    /// SQLite's busy handler: the worker decides (``waitWhenBusy(attempt:)``). The worker
    /// outlives its connection, which its own thread closes.
    private static let busyCallback: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32 = { context, attempt in
        guard let context else { return 0 }
        return Unmanaged<SQLiteWorker>.fromOpaque(context).takeUnretainedValue().waitWhenBusy(attempt: attempt) ? 1 : 0
    }

    /// The pauses between tries for a lock, in milliseconds, as SQLite's own busy timeout
    /// makes them; the last repeats. Short enough that a cancelled caller is answered within
    /// 25 ms.
    private static let pauses: [Int] = [1, 2, 5, 10, 15, 20, 25]

    /// Whether to wait for the lock once more: not when the caller was cancelled, and not past
    /// ``busyTimeout`` since the first try for this lock. Sleeps before it answers yes.
    private func waitWhenBusy(attempt: Int32) -> Bool {
        let now = ContinuousClock.now
        let since = state.withLock { state -> ContinuousClock.Instant? in
            if attempt == 0 { state.busySince = now }
            if state.running?.cancelRequested == true {
                state.gaveUpForCancellation = true
                return nil
            }
            return state.busySince ?? now
        }
        guard let since else { return false }
        let remaining = busyTimeout - (now - since)
        guard remaining > .zero else { return false }
        let pause = Duration.milliseconds(Self.pauses[min(Int(attempt), Self.pauses.count - 1)])
        let sleep = min(pause, remaining)
        let (seconds, attoseconds) = sleep.components
        usleep(UInt32(clamping: seconds * 1_000_000 + attoseconds / 1_000_000_000_000))
        return true
    }
}
