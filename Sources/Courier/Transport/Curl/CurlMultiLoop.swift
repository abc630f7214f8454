internal import CCurlShim
import Foundation
import Synchronization

/// The thread that owns libcurl's multi handle and every easy handle.
///
/// Other threads talk to it only through ``submit(_:)``, which queues a command and wakes
/// the thread with `curl_multi_wakeup`. Everything else here runs on the loop thread:
/// adding and removing easy handles, curl's callbacks, and resuming callers.
///
/// `@unchecked Sendable`: the mutable state is confined to the loop thread; the inbox and
/// the counters are synchronized.
final class CurlMultiLoop: @unchecked Sendable {
    enum Command {
        case start(CurlTransfer)
        case cancel(CurlTransfer)
        case updatePause(CurlTransfer)
    }

    private struct Inbox {
        var commands: [Command] = []
        var jobs: [UnownedJob] = []
        var wakeupPending = false
        var isStopping = false
        var stopWaiters: [CheckedContinuation<Void, Never>] = []
        var isStopped = false
    }

    static let globalInit: Void = {
        _ = curl_global_init(Int(CURL_GLOBAL_DEFAULT))
    }()

    private let multi: UnsafeMutableRawPointer
    private let inbox = LockedBox(Inbox())
    private let activeCount = Atomic<Int>(0)
    private let queuedCount = Atomic<Int>(0)
    private let handleCount = Atomic<Int>(0)
    let configuration: CurlTransport.Configuration

    /// The loop thread's id, set once the thread runs.
    private let threadID = Atomic<UInt>(0)

    // Loop-thread state.
    private var localJobs: [UnownedJob] = []
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    private var idleHandles: [CurlEasyHandle] = []
    private let maximumIdleHandles = 256

    /// Transfers per origin that may hold an easy handle at once (64 per allowed
    /// connection: enough to keep every connection and HTTP/2 stream busy). The rest wait
    /// in their origin's ``CurlOriginSlots`` without a handle.
    private let transfersPerOrigin: Int
    private var origins: [String: CurlOriginSlots] = [:]
    /// The earliest deadline among queued transfers, if any has one.
    private var queueDeadline: ContinuousClock.Instant?

    init(configuration: CurlTransport.Configuration) {
        CurlMultiLoop.globalInit
        self.configuration = configuration
        let connections = configuration.maximumConnectionsPerHost
        self.transfersPerOrigin = connections > 0 ? connections * 64 : .max
        guard let multi = curl_multi_init() else {
            preconditionFailure("curl_multi_init failed: out of memory")
        }
        self.multi = multi
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost)
        _ = ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maximumConnections)
        let thread = Thread { [self] in run() }
        thread.name = "courier.curl"
        thread.start()
    }

    var statistics: CurlTransport.Statistics {
        CurlTransport.Statistics(
            activeTransfers: activeCount.load(ordering: .relaxed),
            queuedTransfers: queuedCount.load(ordering: .relaxed),
            easyHandles: handleCount.load(ordering: .relaxed)
        )
    }

    // MARK: Any thread

    /// Whether the caller runs on the loop thread.
    var isCurrent: Bool {
        threadID.load(ordering: .relaxed) == UInt(bitPattern: Int(bitPattern: pthread_self()))
    }

    /// Runs `command` at once when called on the loop thread, otherwise queues it.
    func perform(_ command: Command) {
        if isCurrent {
            apply(command)
        } else {
            submit(command)
        }
    }

    /// Queues a command for the loop thread and wakes it when it may be waiting.
    func submit(_ command: Command) {
        let (accepted, wake) = inbox.withLock { inbox -> (Bool, Bool) in
            if inbox.isStopping {
                return (false, false)
            }
            inbox.commands.append(command)
            let wake = !inbox.wakeupPending
            inbox.wakeupPending = true
            return (true, wake)
        }
        if !accepted {
            if case .start(let transfer) = command { transfer.fail(CourierError.shutDown("transport")) }
            return
        }
        if wake { _ = curl_multi_wakeup(multi) }
    }

    /// Asks the loop to stop and waits until it has released every handle.
    func shutdown() async {
        await withCheckedContinuation { continuation in
            let (alreadyStopped, wake) = inbox.withLock { inbox -> (Bool, Bool) in
                if inbox.isStopped { return (true, false) }
                inbox.stopWaiters.append(continuation)
                let wake = !inbox.isStopping
                inbox.isStopping = true
                return (false, wake)
            }
            if alreadyStopped { continuation.resume() }
            if wake { _ = curl_multi_wakeup(multi) }
        }
    }

    /// Asks the loop to stop without waiting.
    func stop() {
        let wake = inbox.withLock { inbox -> Bool in
            defer { inbox.isStopping = true }
            return !inbox.isStopping && !inbox.isStopped
        }
        if wake { _ = curl_multi_wakeup(multi) }
    }

    // MARK: Loop thread

    private func run() {
        threadID.store(UInt(bitPattern: Int(bitPattern: pthread_self())), ordering: .relaxed)
        var stillRunning: Int32 = 0
        var commands: [Command] = []
        var jobs: [UnownedJob] = []
        while true {
            let stopping = inbox.withLock { inbox -> Bool in
                inbox.wakeupPending = false
                swap(&commands, &inbox.commands)
                swap(&jobs, &inbox.jobs)
                return inbox.isStopping
            }
            for command in commands { apply(command) }
            commands.removeAll(keepingCapacity: true)
            if stopping { break }
            runJobs(&jobs)
            _ = curl_multi_perform(multi, &stillRunning)
            collectCompletions()
            // Jobs resumed by completions run before the next wait.
            runJobs(&jobs)
            var timeout: Int32 = localJobs.isEmpty ? 1000 : 0
            if let queueDeadline {
                let now = ContinuousClock.now
                if queueDeadline <= now {
                    expireQueued(now: now)
                    timeout = 0
                } else {
                    timeout = min(timeout, Int32(clamping: (queueDeadline - now).milliseconds + 1))
                }
            }
            _ = curl_multi_poll(multi, nil, 0, timeout, nil)
        }
        tearDown()
    }

    /// Runs the queued jobs, then those they enqueue on this thread, until none are left.
    private func runJobs(_ jobs: inout [UnownedJob]) {
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
        jobs.removeAll(keepingCapacity: true)
        var rounds = 0
        while !localJobs.isEmpty && rounds < 64 {
            swap(&jobs, &localJobs)
            for job in jobs { job.runSynchronously(on: executor) }
            jobs.removeAll(keepingCapacity: true)
            rounds += 1
        }
    }

    private func apply(_ command: Command) {
        switch command {
        case .start(let transfer): start(transfer)
        case .cancel(let transfer): cancel(transfer)
        case .updatePause(let transfer): transfer.applyPause()
        }
    }

    private func start(_ transfer: CurlTransfer) {
        guard !transfer.isCancelled else {
            transfer.fail(CancellationError())
            return
        }
        let slots = slots(for: transfer.origin)
        transfer.slots = slots
        if slots.attached < transfersPerOrigin {
            slots.attached += 1
            if !attach(transfer) { release(slots) }
            return
        }
        if let deadline = transfer.options.deadline {
            queueDeadline = min(queueDeadline ?? deadline, deadline)
        }
        transfer.isQueued = true
        slots.enqueue(transfer)
        queuedCount.wrappingAdd(1, ordering: .relaxed)
    }

    /// Gives `transfer` an easy handle and adds it to the multi handle; fails it and
    /// returns `false` when that is impossible.
    private func attach(_ transfer: CurlTransfer, using reused: CurlEasyHandle? = nil) -> Bool {
        let handle: CurlEasyHandle
        if let reused {
            handle = reused
        } else if let idle = idleHandles.popLast() {
            handle = idle
        } else if let fresh = CurlEasyHandle() {
            handle = fresh
            handleCount.wrappingAdd(1, ordering: .relaxed)
        } else {
            transfer.fail(CourierError(kind: .transportFailure, message: "curl_easy_init failed: out of memory"))
            return false
        }
        do {
            try transfer.configure(handle, transport: configuration)
        } catch {
            transfer.detach()
            recycle(handle)
            transfer.fail(error)
            return false
        }
        let easy = handle.pointer
        let code = curl_multi_add_handle(multi, easy)
        guard code == CURLM_OK else {
            transfer.detach()
            recycle(handle)
            let text = String(cString: curl_multi_strerror(code))
            transfer.fail(CourierError(kind: .transportFailure, message: "curl_multi_add_handle failed: \(text)"))
            return false
        }
        running[easy] = transfer
        activeCount.wrappingAdd(1, ordering: .relaxed)
        transfer.attached()
        return true
    }

    /// The slots of `origin`, made on first use. Idle origins are forgotten once more than
    /// 64 are known.
    private func slots(for origin: String) -> CurlOriginSlots {
        if let slots = origins[origin] { return slots }
        if origins.count >= 64 { origins = origins.filter { !$0.value.isIdle } }
        let slots = CurlOriginSlots()
        origins[origin] = slots
        return slots
    }

    /// Frees a slot of an origin and hands it to the oldest transfer waiting there.
    private func release(_ slots: CurlOriginSlots?) {
        guard let slots else { return }
        slots.attached -= 1
        while let next = slots.dequeue() {
            guard next.isQueued else {  // cancelled or timed out while waiting
                slots.departedEntryDequeued()
                continue
            }
            next.isQueued = false
            queuedCount.wrappingSubtract(1, ordering: .relaxed)
            slots.attached += 1
            if attach(next) { break }
            slots.attached -= 1
        }
    }

    /// Fails the queued transfers whose total timeout ran out before they got a slot.
    private func expireQueued(now: ContinuousClock.Instant) {
        var earliest: ContinuousClock.Instant?
        for slots in origins.values {
            var left = 0
            for transfer in slots.queued where transfer.isQueued {
                guard let deadline = transfer.options.deadline else { continue }
                if deadline <= now {
                    transfer.isQueued = false
                    queuedCount.wrappingSubtract(1, ordering: .relaxed)
                    transfer.fail(
                        CourierError(kind: .timedOut, message: "the request timed out waiting for a connection")
                    )
                    left += 1
                } else {
                    earliest = min(earliest ?? deadline, deadline)
                }
            }
            for _ in 0..<left { slots.waitingTransferLeft() }
        }
        // Scan again at the earliest remaining deadline, but not more often than every 10 ms:
        // deep queues with spread deadlines must not be walked once per millisecond.
        queueDeadline = earliest.map { max($0, now + .milliseconds(10)) }
    }

    private func cancel(_ transfer: CurlTransfer) {
        if transfer.isQueued {
            // Waiting for a slot: its entry goes lazily (release skips it, or compaction).
            transfer.isQueued = false
            transfer.isCancelled = true
            queuedCount.wrappingSubtract(1, ordering: .relaxed)
            transfer.fail(CancellationError())
            transfer.slots?.waitingTransferLeft()
            return
        }
        guard let easy = transfer.easy, running[easy] === transfer else {
            // Not started yet (or already ended): the start command will see the flag.
            transfer.isCancelled = true
            return
        }
        transfer.isCancelled = true
        remove(easy)
        transfer.detach()  // drops the last reference to the handle: curl_easy_cleanup
        handleCount.wrappingSubtract(1, ordering: .relaxed)
        transfer.fail(CancellationError())
        release(transfer.slots)
    }

    private func collectCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            guard let transfer = running[easy], let handle = transfer.handle else { continue }
            remove(easy)
            if code != CURLE_OK, transfer.retriesOnFreshConnection(after: code) {
                // The connection died before the server answered: once more, on a new one.
                transfer.detach(after: code)
                if !attach(transfer, using: handle) { release(transfer.slots) }
                continue
            }
            transfer.complete(code)
            transfer.detach(after: code)
            recycle(handle)
            transfer.slots?.record(bodyBytes: transfer.receivedBytes)
            release(transfer.slots)
        }
    }

    private func remove(_ easy: UnsafeMutableRawPointer) {
        _ = curl_multi_remove_handle(multi, easy)
        running[easy] = nil
        activeCount.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Keeps an easy handle for the next transfer, options and all (see ``CurlEasyHandle``),
    /// or lets it go (`curl_easy_cleanup`) when enough are idle.
    private func recycle(_ handle: CurlEasyHandle) {
        handle.transferEnded()
        if idleHandles.count < maximumIdleHandles {
            idleHandles.append(handle)
        } else {
            handleCount.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    private func tearDown() {
        for (easy, transfer) in running {
            _ = curl_multi_remove_handle(multi, easy)
            transfer.detach()  // releases the handle: curl_easy_cleanup
            handleCount.wrappingSubtract(1, ordering: .relaxed)
            activeCount.wrappingSubtract(1, ordering: .relaxed)
            transfer.fail(CourierError.shutDown("transport"))
        }
        running.removeAll()
        for slots in origins.values {
            for transfer in slots.queued where transfer.isQueued {
                transfer.isQueued = false
                queuedCount.wrappingSubtract(1, ordering: .relaxed)
                transfer.fail(CourierError.shutDown("transport"))
            }
        }
        origins.removeAll()
        handleCount.wrappingSubtract(idleHandles.count, ordering: .relaxed)
        idleHandles.removeAll()  // curl_easy_cleanup for each
        let (commands, waiters) = inbox.withLock { inbox in
            inbox.isStopped = true
            defer {
                inbox.commands.removeAll()
                inbox.stopWaiters.removeAll()
            }
            return (inbox.commands, inbox.stopWaiters)
        }
        for case .start(let transfer) in commands { transfer.fail(CourierError.shutDown("transport")) }
        _ = curl_multi_cleanup(multi)
        for waiter in waiters { waiter.resume() }
    }
}

extension CurlMultiLoop: TaskExecutor {
    /// Runs `job` on the loop thread, between two polls.
    ///
    /// A job enqueued from the loop thread itself costs no wake-up: this is what makes
    /// callers that prefer this executor cheap.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if isCurrent {
            localJobs.append(job)
            return
        }
        let wake = inbox.withLock { inbox -> Bool in
            inbox.jobs.append(job)
            let wake = !inbox.wakeupPending
            inbox.wakeupPending = true
            return wake
        }
        if wake { _ = curl_multi_wakeup(multi) }
    }
}

extension CourierError {
    static let shutDownError = CourierError(kind: .shutDown, message: "the transport was shut down")
}
