internal import CCurlShim
import CoreMetrics
import Foundation
import Synchronization

/// The thread that owns libcurl's multi handle and every easy handle.
///
/// Other threads talk to it only through ``submit(_:)``, which queues a command and wakes
/// the thread with `curl_multi_wakeup`. Everything else here runs on the loop thread:
/// adding and removing easy handles, curl's callbacks, and resuming callers.
///
/// Stopping is orderly: every transfer in flight, queued or still in the inbox fails with
/// ``CourierError/Kind/shutDown``; every job already handed to the loop runs, and so does
/// every job the failures resume; only then is the multi handle cleaned up. Wake-ups happen
/// with the inbox locked and never once it is marked stopped, so none reaches a cleaned-up
/// handle; jobs enqueued after the stop run on the global concurrent executor, so a task
/// that prefers this executor never waits for a thread that is gone.
///
/// `@unchecked Sendable`: the mutable state is confined to the loop thread (debug builds
/// assert it where commands are applied and transfers end); the inbox and the counters are
/// synchronized.
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
        /// Set once the last job has been taken at the stop: from then on no wake-up reaches
        /// the multi handle and jobs go to the global executor.
        var isStopped = false
        /// Set once the multi handle is cleaned up: a later ``shutdown()`` returns at once.
        var isCleanedUp = false
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
    /// The trust of a secured transport, as it changes while the loop runs; `nil` for an
    /// unpinned one. Held by the loop so that it outlives every connection.
    let trust: TransportTrust?

    /// The loop thread's id, set once the thread runs.
    private let threadID = Atomic<UInt>(0)

    // Loop-thread state.
    private var localJobs: [UnownedJob] = []
    /// Whether the loop is tearing down: jobs and commands from its own thread then go
    /// through the inbox like everyone else's.
    private var isClosing = false
    private var running: [UnsafeMutableRawPointer: CurlTransfer] = [:]
    /// Whether an easy handle was added since the last `curl_multi_perform`.
    private var addedSincePerform = false
    /// Streamed transfers that batched body bytes in this pass (``publishAfterPass(_:)``).
    private var batchedStreams: [CurlTransfer] = []
    /// What a transfer without an easy handle reads as its running parts (``CurlTransfer/running``).
    private let detachedParts = CurlTransfer.Running()
    private var idleHandles: [CurlEasyHandle] = []
    private let maximumIdleHandles = 256

    private var origins: [CurlOriginSlots.Origin: CurlOriginSlots] = [:]
    /// The earliest deadline among queued transfers, if any has one.
    private var queueDeadline: ContinuousClock.Instant?
    /// When the stall sweep runs next (``StallClock``), if a running transfer is watched.
    private var stallCheckDue: UInt64?

    init(configuration: CurlTransport.Configuration) {
        CurlMultiLoop.globalInit
        self.configuration = configuration
        self.trust =
            configuration.security.isSecured
            ? TransportTrust(
                security: configuration.security,
                metricsFactory: configuration.metricsFactory ?? MetricsSystem.factory
            ) : nil
        guard let multi = curl_multi_init() else {
            preconditionFailure("curl_multi_init failed: out of memory")
        }
        self.multi = multi
        // Options libcurl 7.68 and later know; they fail only for an unknown option or value.
        let set = [
            ccurl_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX)),
            ccurl_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, configuration.maximumConnectionsPerHost),
            ccurl_multi_setopt_long(multi, CURLMOPT_MAX_TOTAL_CONNECTIONS, configuration.maximumConnections),
            ccurl_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, CurlMultiLoop.idleConnections(configuration)),
            ccurl_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, CurlMultiLoop.streamsPerConnection),
        ]
        assert(set.allSatisfy { $0 == CURLM_OK }, "curl_multi_setopt failed: \(set)")
        let thread = Thread { [self] in run() }
        thread.name = "courier.curl"
        thread.start()
    }

    /// How many connections libcurl keeps open for reuse (`CURLMOPT_MAXCONNECTS`): the total
    /// limit when there is one, else 32 hosts' worth, at least 64.
    ///
    /// Without it, libcurl keeps four per transfer it holds at the moment a connection comes
    /// back, and closes the oldest above that: when callers send one request after another,
    /// the transfers in flight drop to a few between two requests, and a busy origin's idle
    /// connections were closed and opened again (16 callers opened 25–28 connections to one
    /// origin, each a new TCP and TLS handshake).
    static func idleConnections(_ configuration: CurlTransport.Configuration) -> Int {
        configuration.maximumConnections > 0
            ? configuration.maximumConnections : max(64, configuration.maximumConnectionsPerHost * 32)
    }

    /// The most HTTP/2 streams one connection carries at once (`CURLMOPT_MAX_CONCURRENT_STREAMS`),
    /// when the server allows that many: the server's own limit (its `SETTINGS_MAX_CONCURRENT_STREAMS`)
    /// decides below it.
    ///
    /// libcurl's own limit is 100, below what servers commonly allow (nginx 128, others 250 or
    /// more), and libcurl 7.88 fans out past it: every transfer that finds the connections full
    /// opens a connection of its own, up to ``CurlTransport/Configuration/maximumConnectionsPerHost``.
    /// 256 requests in flight to an origin that allows 1,024 streams opened 86–156 TLS
    /// connections, about 80 KB each (libcurl's connection, nghttp2's session, OpenSSL's), where
    /// one connection carries them all (peak RSS 53 → 41 MiB in `Benchmarks/`, the same CPU per
    /// request). 1,000 bounds what one connection takes on when a server sets no limit. Past the
    /// server's limit libcurl still opens a connection per further transfer.
    static let streamsPerConnection = 1000

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
        if isCurrent, !isClosing {
            apply(command)
        } else {
            submit(command)
        }
    }

    /// Queues a command for the loop thread and wakes it when it may be waiting.
    func submit(_ command: Command) {
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.isStopping else { return false }
            inbox.commands.append(command)
            wake(&inbox)
            return true
        }
        if !accepted, case .start(let transfer) = command { transfer.fail(CourierError.shutDown("transport")) }
    }

    /// Asks the loop to stop and waits until it has released every handle.
    func shutdown() async {
        await withCheckedContinuation { continuation in
            let stopped = inbox.withLock { inbox -> Bool in
                if inbox.isCleanedUp { return true }
                inbox.stopWaiters.append(continuation)
                inbox.isStopping = true
                wake(&inbox)
                return false
            }
            if stopped { continuation.resume() }
        }
    }

    /// Asks the loop to stop without waiting.
    func stop() {
        inbox.withLock { inbox in
            inbox.isStopping = true
            wake(&inbox)
        }
    }

    /// Wakes the loop thread unless a wake-up is already pending. Called with the inbox
    /// locked: the loop cleans up the multi handle only after marking the inbox stopped under
    /// the same lock, so a wake-up never reaches a cleaned-up handle.
    private func wake(_ inbox: inout Inbox) {
        guard !inbox.wakeupPending, !inbox.isStopped else { return }
        inbox.wakeupPending = true
        let code = curl_multi_wakeup(multi)
        assert(code == CURLM_OK, "curl_multi_wakeup failed: \(code)")
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
            if stopping { break }
            for command in commands { apply(command) }
            commands.removeAll(keepingCapacity: true)
            runJobs(&jobs)
            addedSincePerform = false
            let performed = curl_multi_perform(multi, &stillRunning)
            if performed != CURLM_OK { abandonRunning(performed) }
            collectCompletions()
            if let due = stallCheckDue, due <= StallClock.now { failStalledTransfers() }
            // Jobs resumed by completions run before the next wait. Then the streams' batches go
            // out, those of bytes the jobs made libcurl deliver (a stream un-paused) too; the
            // consumers they wake on this thread run in the next pass, which does not wait.
            runJobs(&jobs)
            let wokeConsumers = publishBatches()
            // A batch held back for a transfer mid-flow: its bytes are due, do not wait for them.
            var timeout: Int32 = localJobs.isEmpty && batchedStreams.isEmpty ? 1000 : 0
            if let due = stallCheckDue {
                let now = StallClock.now
                timeout = min(timeout, due <= now ? 0 : Int32(clamping: (due - now) / 1_000_000 + 1))
            }
            if let queueDeadline {
                let now = ContinuousClock.now
                if queueDeadline <= now {
                    expireQueued(now: now)
                    timeout = 0
                } else {
                    timeout = min(timeout, Int32(clamping: (queueDeadline - now).milliseconds + 1))
                }
            }
            // A transfer added since the perform (a caller on this executor sending its next
            // request as the last one ended, a slot handed on) goes out now: libcurl would
            // only make the poll return at once for it, one system call for nothing.
            if addedSincePerform { continue }
            // Consumers just got bytes: let them run before reading more. Where they share this
            // core, the loop would otherwise keep it while the bytes keep coming (a real-time
            // thread never loses it to its equals) and the streams would fill and pause. A
            // paused HTTP/2 stream still reads into libcurl's own buffer (7.88 takes its
            // stream's bytes while paused, and copies them again at each resume), so a stream
            // left behind costs memory and copies, not only time. Where the consumers run on
            // other cores, this returns at once.
            if wokeConsumers { sched_yield() }
            let polled = curl_multi_poll(multi, nil, 0, timeout, nil)
            if polled != CURLM_OK {
                abandonRunning(polled)
                usleep(1000)  // never a busy loop over a failing poll
            }
        }
        tearDown(commands: commands, jobs: jobs)
    }

    /// Has `transfer`'s batch of streamed bytes published before the loop waits again: a
    /// consumer is woken once per pass, with all that arrived in it, and never waits for bytes
    /// that are here.
    func publishAfterPass(_ transfer: CurlTransfer) {
        assert(isCurrent, "a stream batch scheduled off the loop thread")
        batchedStreams.append(transfer)
    }

    /// The spare running parts, fresh (loop thread): a transfer without an easy handle has not
    /// begun, or has ended.
    func freshDetachedParts() -> CurlTransfer.Running {
        assert(isCurrent, "a transfer's running parts read off the loop thread")
        detachedParts.reset()
        return detachedParts
    }

    /// Publishes the batches of this pass; keeps those of transfers still mid-flow for the
    /// next (``CurlTransfer/passEnded()``). Returns whether any batch went out.
    private func publishBatches() -> Bool {
        guard !batchedStreams.isEmpty else { return false }
        let scheduled = batchedStreams.count
        batchedStreams.removeAll { !$0.passEnded() }
        return batchedStreams.count < scheduled
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
        assert(isCurrent, "a command applied off the loop thread")
        switch command {
        case .start(let transfer): start(transfer)
        case .cancel(let transfer): cancel(transfer)
        case .updatePause(let transfer):
            let code = transfer.applyPause()
            if code != CURLE_OK { finish(transfer, code: code) }
        }
    }

    private func start(_ transfer: CurlTransfer) {
        let slots = slots(for: transfer.origin)
        switch transfer.start(hasSlot: slots.attached < slots.transferLimit) {
        case .attach:
            transfer.slots = slots
            slots.attached += 1
            if !attach(transfer) { release(slots) }
        case .enqueue:
            transfer.slots = slots
            if let deadline = transfer.options.deadline {
                queueDeadline = min(queueDeadline ?? deadline, deadline)
            }
            slots.enqueue(transfer)
            queuedCount.wrappingAdd(1, ordering: .relaxed)
        case .failCancelled:
            transfer.deliver(CancellationError(), to: .caller)
        case .ignore:
            break
        }
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
        addedSincePerform = true
        activeCount.wrappingAdd(1, ordering: .relaxed)
        let paused = transfer.attached()
        if paused != CURLE_OK { finish(transfer, code: paused) }
        return true
    }

    /// The slots of `origin`, made on first use. Idle origins are forgotten once more than
    /// 64 are known.
    private func slots(for origin: CurlOriginSlots.Origin) -> CurlOriginSlots {
        if let slots = origins[origin] { return slots }
        if origins.count >= 64 { origins = origins.filter { !$0.value.isIdle } }
        let slots = CurlOriginSlots(
            secure: origin.isSecure,
            connections: configuration.maximumConnectionsPerHost
        )
        origins[origin] = slots
        return slots
    }

    /// Frees a slot of an origin and hands the free slots to the oldest transfers waiting
    /// there (more than one when the origin has just turned out to multiplex).
    private func release(_ slots: CurlOriginSlots?) {
        guard let slots else { return }
        slots.attached -= 1
        while slots.attached < slots.transferLimit, let next = slots.dequeue() {
            guard next.slotGranted() else {  // cancelled or timed out while waiting
                slots.departedEntryDequeued()
                continue
            }
            queuedCount.wrappingSubtract(1, ordering: .relaxed)
            slots.attached += 1
            if !attach(next) { slots.attached -= 1 }
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

    /// Makes the stall sweep run by `due` (``StallClock``); a transfer calls this when its
    /// watch starts or restarts.
    func scheduleStallCheck(at due: UInt64) {
        assert(isCurrent, "a stall check scheduled off the loop thread")
        stallCheckDue = min(stallCheckDue ?? due, due)
    }

    /// Fails the running transfers on which no byte moved for their stall timeout, and
    /// schedules the next sweep for the earliest of the others. Transfers resting (see
    /// CurlTransfer+Stall.swift) schedule a sweep again when they move.
    private func failStalledTransfers() {
        let now = StallClock.now
        var earliest: UInt64?
        var stalled: [(UnsafeMutableRawPointer, CurlTransfer)] = []
        for (easy, transfer) in running {
            guard let due = transfer.stallDue else { continue }
            if due <= now {
                stalled.append((easy, transfer))
            } else {
                earliest = min(earliest ?? due, due)
            }
        }
        stallCheckDue = earliest
        for (easy, transfer) in stalled { abandon(transfer, easy: easy, with: transfer.stalledError) }
    }

    private func cancel(_ transfer: CurlTransfer) {
        switch transfer.cancel() {
        case .deferToStart, .ignore:
            // Not started yet (the start fails it), or already ended.
            break
        case .leaveQueue(let recipient):
            // Waiting for a slot: its entry goes lazily (release skips it, or compaction).
            queuedCount.wrappingSubtract(1, ordering: .relaxed)
            transfer.deliver(CancellationError(), to: recipient)
            transfer.slots?.waitingTransferLeft()
        case .abandon(let recipient):
            guard let easy = transfer.easy, running[easy] === transfer else {
                transfer.deliver(CancellationError(), to: recipient)
                return
            }
            abandon(transfer, easy: easy, with: CancellationError(), to: recipient)
        }
    }

    /// Ends a running transfer that will not complete: its handle is cleaned up, not reused.
    /// `recipient` is whom to tell when the transfer's machine already ended it.
    private func abandon(
        _ transfer: CurlTransfer,
        easy: UnsafeMutableRawPointer,
        with error: any Error,
        to recipient: CurlTransfer.StateMachine.Recipient? = nil
    ) {
        remove(easy)
        transfer.detach()  // drops the last reference to the handle: curl_easy_cleanup
        handleCount.wrappingSubtract(1, ordering: .relaxed)
        if let recipient {
            transfer.deliver(error, to: recipient)
        } else {
            transfer.fail(error)
        }
        release(transfer.slots)
    }

    /// Fails every running transfer after libcurl's multi interface itself failed.
    private func abandonRunning(_ code: CURLMcode) {
        let error = CourierError(
            kind: .transportFailure,
            message: "libcurl's transfer loop failed: \(String(cString: curl_multi_strerror(code)))"
        )
        for (easy, transfer) in running { abandon(transfer, easy: easy, with: error) }
    }

    private func collectCompletions() {
        var remaining: Int32 = 0
        while let message = curl_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle,
                let transfer = running[easy]
            else { continue }
            finish(transfer, code: message.pointee.data.result)
        }
    }

    /// Ends a running transfer with curl's result, or sends it once more on a fresh
    /// connection when its connection died before the server answered.
    private func finish(_ transfer: CurlTransfer, code: CURLcode) {
        assert(isCurrent, "a transfer ended off the loop thread")
        guard let easy = transfer.easy, let handle = transfer.handle, running[easy] === transfer else { return }
        remove(easy)
        if code != CURLE_OK, transfer.retriesOnFreshConnection(after: code) {
            transfer.detach(after: code)
            if !attach(transfer, using: handle) { release(transfer.slots) }
            return
        }
        transfer.complete(code)
        if let slots = transfer.slots {
            slots.record(bodyBytes: transfer.running.receivedBytes)
            // Any response tells, a failed one too: the version is known once a head arrived.
            slots.learnMultiplexing(handle.httpVersion)
        }
        transfer.detach(after: code)
        recycle(handle)
        release(transfer.slots)
    }

    private func remove(_ easy: UnsafeMutableRawPointer) {
        let code = curl_multi_remove_handle(multi, easy)
        assert(code == CURLM_OK, "curl_multi_remove_handle failed: \(code)")
        running[easy] = nil
        activeCount.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Keeps an easy handle for the next transfer, options and all (see ``CurlEasyHandle``),
    /// or lets it go (`curl_easy_cleanup`) when enough are idle or it may not serve again.
    private func recycle(_ handle: CurlEasyHandle) {
        handle.transferEnded()
        if handle.isReusable, idleHandles.count < maximumIdleHandles {
            idleHandles.append(handle)
        } else {
            handleCount.wrappingSubtract(1, ordering: .relaxed)
        }
    }

    /// Fails everything in flight, runs every job handed to the loop — those taken with the
    /// stop and those the failures resume — and only then cleans up the multi handle.
    private func tearDown(commands: [Command], jobs: [UnownedJob]) {
        isClosing = true
        let shutDown = CourierError.shutDown("transport")
        for (easy, transfer) in running {
            let code = curl_multi_remove_handle(multi, easy)
            assert(code == CURLM_OK, "curl_multi_remove_handle failed: \(code)")
            transfer.detach()  // releases the handle: curl_easy_cleanup
            handleCount.wrappingSubtract(1, ordering: .relaxed)
            activeCount.wrappingSubtract(1, ordering: .relaxed)
            transfer.fail(shutDown)
        }
        running.removeAll()
        for slots in origins.values {
            for transfer in slots.queued where transfer.isQueued {
                queuedCount.wrappingSubtract(1, ordering: .relaxed)
                transfer.fail(shutDown)
            }
        }
        origins.removeAll()
        handleCount.wrappingSubtract(idleHandles.count, ordering: .relaxed)
        idleHandles.removeAll()  // curl_easy_cleanup for each
        var commands = commands
        var jobs = jobs
        while true {
            // Starts accepted before the stop fail; nothing else needs doing any more.
            for case .start(let transfer) in commands { transfer.fail(shutDown) }
            runJobs(&jobs)
            let done = inbox.withLock { inbox -> Bool in
                swap(&commands, &inbox.commands)
                swap(&jobs, &inbox.jobs)
                guard commands.isEmpty, jobs.isEmpty else { return false }
                inbox.isStopped = true
                return true
            }
            if done { break }
        }
        _ = curl_multi_cleanup(multi)  // no wake-up can reach it: the inbox is stopped
        let waiters = inbox.withLock { inbox in
            inbox.isCleanedUp = true
            defer { inbox.stopWaiters.removeAll() }
            return inbox.stopWaiters
        }
        for waiter in waiters { waiter.resume() }
    }
}

extension CurlMultiLoop: TaskExecutor {
    /// Runs `job` on the loop thread, between two polls.
    ///
    /// A job enqueued from the loop thread itself costs no wake-up: this is what makes
    /// callers that prefer this executor cheap.
    /// Once the loop has stopped, jobs run on the global concurrent executor instead: a task
    /// that prefers this executor goes on after the transport shut down.
    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        if isCurrent, !isClosing {
            localJobs.append(job)
            return
        }
        let accepted = inbox.withLock { inbox -> Bool in
            guard !inbox.isStopped else { return false }
            inbox.jobs.append(job)
            wake(&inbox)
            return true
        }
        if !accepted { globalConcurrentExecutor.enqueue(job) }
    }
}

extension CourierError {
    static let shutDownError = CourierError(kind: .shutDown, message: "the transport was shut down")
}
