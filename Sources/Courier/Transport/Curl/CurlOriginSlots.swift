/// What a ``CurlMultiLoop`` keeps per origin (`scheme://authority`): how many transfers hold
/// an easy handle, those waiting, in order, for one of them to end, whether the origin
/// multiplexes, and how large its responses have been lately.
///
/// libcurl queues transfers beyond its connection limits itself, but each of them already
/// holds an easy handle and, once it asks for a connection, its receive buffer (about 20 KB
/// together). Waiting here costs only the transfer, so ten thousand requests in flight do
/// not mean ten thousand easy handles.
///
/// Loop thread only, and not `Sendable`: only the loop and its transfers hold one.
final class CurlOriginSlots {
    /// An origin as its transfers name it: the request's scheme and authority, kept as the
    /// request holds them (no string is built per request to look the slots up).
    struct Origin: Hashable {
        var scheme: String
        var authority: String

        /// Whether the origin is reached over TLS.
        var isSecure: Bool { Self.isSecure(scheme: scheme) }

        /// Whether an origin of `scheme` is reached over TLS.
        static func isSecure(scheme: String) -> Bool { scheme.utf8.count == 5 && scheme.lowercased() == "https" }
    }

    /// Transfers of the origin that hold an easy handle.
    var attached = 0
    private var waiting: [CurlTransfer] = []
    private var head = 0

    /// Whether the origin answered over HTTP/2 or HTTP/3, where a connection carries many
    /// transfers at once: `nil` until a response shows it.
    private(set) var isMultiplexed: Bool?

    /// The origin's last final response head, which a head that repeats it shares.
    let headMemo = ResponseHeadMemo()

    /// Whether the origin is reached over TLS, where HTTP/2 may be negotiated.
    private let isSecure: Bool
    /// The connections allowed to the origin (`0`: no limit).
    private let connections: Int

    init(secure: Bool, connections: Int) {
        isSecure = secure
        self.connections = max(0, connections)
    }

    /// The most transfers of the origin that may hold an easy handle. Over HTTP/1 a
    /// connection carries one transfer at a time, so two per connection — the one on it and
    /// the next, ready the moment it ends — keep every connection busy; a multiplexed
    /// connection gets 64, enough for its streams. Until the origin has answered, an HTTPS
    /// origin counts as multiplexed (it may negotiate HTTP/2, and long-lived requests must not
    /// wait for a first response to end) and a plain HTTP one as HTTP/1 (Courier speaks
    /// HTTP/2 over TLS only).
    var transferLimit: Int {
        guard connections > 0 else { return .max }
        return connections * (isMultiplexed ?? isSecure ? 64 : 2)
    }

    /// Learns from the HTTP version of a response whether the origin multiplexes; `.unknown`
    /// (no response head) teaches nothing.
    func learnMultiplexing(_ version: Response.Metrics.HTTPVersion) {
        switch version {
        case .http2, .http3: isMultiplexed = true
        case .http1_0, .http1_1: isMultiplexed = false
        case .unknown: break
        }
    }

    /// A moving average of the response body bytes of the origin's recent transfers.
    private var recentBodyBytes = 0

    /// Whether nothing of the origin is attached or waiting.
    var isIdle: Bool { attached == 0 && head == waiting.count }

    /// The waiting transfers, oldest first; may include ones that were cancelled meanwhile.
    var queued: ArraySlice<CurlTransfer> { waiting[head...] }

    func enqueue(_ transfer: CurlTransfer) {
        waiting.append(transfer)
    }

    /// Queue entries of transfers that left while waiting (cancelled, timed out).
    private var departed = 0

    /// Notes that a waiting transfer left (its entry stays until dequeued or compacted).
    /// Once most entries are such, they go at once: a cancelled transfer must not keep its
    /// request body alive while the origin's queue drains.
    func waitingTransferLeft() {
        departed += 1
        if departed >= 64, departed * 2 >= waiting.count - head {
            waiting = waiting[head...].filter(\.isQueued)
            head = 0
            departed = 0
        }
    }

    /// Notes that a dequeued entry was one of a transfer that had left.
    func departedEntryDequeued() {
        departed = max(0, departed - 1)
    }

    /// The oldest waiting transfer.
    func dequeue() -> CurlTransfer? {
        guard head < waiting.count else { return nil }
        let transfer = waiting[head]
        head += 1
        if head == waiting.count {
            waiting.removeAll()
            head = 0
        } else if head >= 1024, head * 2 >= waiting.count {
            waiting.removeFirst(head)  // amortised: the array does not grow without bound
            head = 0
        }
        return transfer
    }

    /// Records the body size of a transfer that ended.
    func record(bodyBytes: Int) {
        recentBodyBytes = (recentBodyBytes * 3 + min(bodyBytes, 64 << 20)) / 4
    }

    /// The receive buffer (`CURLOPT_BUFFERSIZE`) for the origin's next transfer.
    ///
    /// libcurl allocates this buffer for every transfer and copies each read through it.
    /// 16 KiB (curl's default) suits small responses: a larger buffer costs page faults on
    /// every request. An origin that has lately sent large bodies gets 128 KiB: eight times
    /// fewer reads, write callbacks and stream chunks per MiB (1 MiB bodies: about 1.5×
    /// the throughput in Benchmarks/). The choice adapts like NIO's adaptive receive
    /// allocator: from what the origin sent, before this transfer's size is known. (libcurl
    /// refuses a new size while a handle still holds its buffer, as it does after HTTP/2
    /// transfers; ``CurlTransfer`` then leaves the size as it is.)
    var receiveBufferSize: Int {
        recentBodyBytes >= 256 << 10 ? 128 << 10 : CurlOriginSlots.defaultReceiveBufferSize
    }

    static let defaultReceiveBufferSize = 16 << 10
}

@available(*, unavailable)
extension CurlOriginSlots: Sendable {}
