import CSwiftLoopCurl
import LoadClientSupport
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// One thread running libcurl's multi handle, and a task executor on that thread.
///
/// Other threads hand it work through `inbox` (requests to start, jobs to run) and wake
/// `curl_multi_poll` only when the inbox was empty; work handed over on the loop thread
/// itself needs no wake-up, because the loop looks at the inbox before it polls.
final class CurlLoop: TaskExecutor, @unchecked Sendable {
    private struct Inbox {
        var starts: [UnsafeContinuation<RequestOutcome, Never>] = []
        var jobs: [UnownedJob] = []
        var stopping = false
        var isEmpty: Bool { starts.isEmpty && jobs.isEmpty }
    }

    private let inbox = Mutex(Inbox())
    private let multi: UnsafeMutableRawPointer
    private let url: String
    private let caFile: String?
    private var thread = pthread_t()

    // Loop-thread state.
    private var idle: [UnsafeMutableRawPointer] = []
    private var waiting: [UnsafeContinuation<RequestOutcome, Never>?] = []
    private var bytes: [UnsafeMutablePointer<Int>] = []
    private var freeSlots: [Int] = []
    private var inFlight = 0

    init(options: LoadOptions) {
        curl_global_init(Int(CURL_GLOBAL_DEFAULT))
        multi = curl_multi_init()!
        url = options.url
        caFile = options.caFile
        _ = swiftloop_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        _ = swiftloop_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, options.connections)
        // As Courier's transport: idle connections stay cached between requests (libcurl's
        // default cache of 4 per transfer in flight closes some whenever few are in flight),
        // and one HTTP/2 connection carries up to 1,000 streams (libcurl's default is 100).
        _ = swiftloop_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, max(64, 32 * options.connections))
        _ = swiftloop_multi_setopt_long(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000)
        let box = Unmanaged.passRetained(self).toOpaque()
        pthread_create(
            &thread,
            nil,
            { box in
                let loop = Unmanaged<CurlLoop>.fromOpaque(box!).takeRetainedValue()
                loop.run()
                return nil
            },
            box
        )
    }

    private var onLoopThread: Bool { pthread_equal(pthread_self(), thread) != 0 }

    /// Starts one GET; the continuation is resumed on the loop thread when it completes.
    func start(_ continuation: UnsafeContinuation<RequestOutcome, Never>) {
        let wake = inbox.withLock { inbox in
            defer { inbox.starts.append(continuation) }
            return inbox.isEmpty
        }
        if wake && !onLoopThread { curl_multi_wakeup(multi) }
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let wake = inbox.withLock { inbox in
            defer { inbox.jobs.append(job) }
            return inbox.isEmpty
        }
        if wake && !onLoopThread { curl_multi_wakeup(multi) }
    }

    /// Ends the loop once the requests in flight are done, and waits for its thread.
    func stop() {
        inbox.withLock { $0.stopping = true }
        curl_multi_wakeup(multi)
        pthread_join(thread, nil)
    }

    private func run() {
        let executor = asUnownedTaskExecutor()
        var running: Int32 = 0
        while true {
            let work = inbox.withLock { inbox in
                let work = inbox
                inbox.starts.removeAll(keepingCapacity: true)
                inbox.jobs.removeAll(keepingCapacity: true)
                return work
            }
            for continuation in work.starts { begin(continuation) }
            for job in work.jobs { job.runSynchronously(on: executor) }
            if work.stopping && inFlight == 0 && work.isEmpty { break }
            curl_multi_perform(multi, &running)
            complete()
            if inbox.withLock({ $0.isEmpty }) {
                curl_multi_poll(multi, nil, 0, 1000, nil)
            }
        }
        for easy in idle { curl_easy_cleanup(easy) }
        curl_multi_cleanup(multi)
    }

    private func begin(_ continuation: UnsafeContinuation<RequestOutcome, Never>) {
        let slot: Int
        let easy: UnsafeMutableRawPointer
        if let free = freeSlots.popLast() {
            slot = free
            easy = idle[slot]
        } else {
            slot = idle.count
            easy = curl_easy_init()!
            idle.append(easy)
            waiting.append(nil)
            bytes.append(.allocate(capacity: 1))
            configure(easy, slot: slot)
        }
        waiting[slot] = continuation
        bytes[slot].pointee = 0
        inFlight += 1
        curl_multi_add_handle(multi, easy)
    }

    private func configure(_ handle: UnsafeMutableRawPointer, slot: Int) {
        url.withCString { _ = swiftloop_setopt_pointer(handle, CURLOPT_URL, $0) }  // libcurl copies strings
        _ = swiftloop_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = swiftloop_setopt_write(handle, CurlLoop.onBody)
        _ = swiftloop_setopt_pointer(handle, CURLOPT_WRITEDATA, bytes[slot])
        _ = swiftloop_setopt_pointer(handle, CURLOPT_PRIVATE, UnsafeRawPointer(bitPattern: slot + 1))
        _ = swiftloop_setopt_long(handle, CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
        _ = swiftloop_setopt_long(handle, CURLOPT_PIPEWAIT, 1)
        if let caFile { caFile.withCString { _ = swiftloop_setopt_pointer(handle, CURLOPT_CAINFO, $0) } }
    }

    /// The body callback: adds to the byte counter of the slot (its `CURLOPT_WRITEDATA`).
    private static let onBody:
        @convention(c) (UnsafeMutablePointer<CChar>?, Int, Int, UnsafeMutableRawPointer?) -> Int = {
            _,
            size,
            count,
            counter in
            counter!.assumingMemoryBound(to: Int.self).pointee += size * count
            return size * count
        }

    private func complete() {
        var queued: Int32 = 0
        while let message = curl_multi_info_read(multi, &queued) {
            guard message.pointee.msg == CURLMSG_DONE, let easy = message.pointee.easy_handle else { continue }
            let result = message.pointee.data.result
            var privateData: UnsafeMutableRawPointer?
            _ = swiftloop_getinfo_pointer(easy, CURLINFO_PRIVATE, &privateData)
            let slot = Int(bitPattern: privateData) - 1
            var status = 0
            _ = swiftloop_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            var version = 0
            _ = swiftloop_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
            curl_multi_remove_handle(multi, easy)
            inFlight -= 1
            freeSlots.append(slot)
            let continuation = waiting[slot]!
            waiting[slot] = nil
            let outcome = RequestOutcome(
                bytes: bytes[slot].pointee,
                status: status,
                httpVersion: version == CURL_HTTP_VERSION_2_0 ? "HTTP/2" : "HTTP/1.1",
                error: result == CURLE_OK ? nil : String(cString: curl_easy_strerror(result))
            )
            continuation.resume(returning: outcome)
        }
    }
}
