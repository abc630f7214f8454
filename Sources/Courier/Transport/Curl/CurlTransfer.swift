internal import CCurlShim
import Foundation
import HTTPTypes

/// One request on its way through a ``CurlMultiLoop``.
///
/// `@unchecked Sendable`: the caller writes ``continuation`` before it submits the start
/// command (the inbox lock orders the two); from then on every field is read and written
/// only on the loop thread, in curl's callbacks and in the loop's commands.
final class CurlTransfer: @unchecked Sendable {
    let request: HTTPRequest
    let body: RequestBody?
    let options: TransferOptions
    let control: TransferControl
    unowned let loop: CurlMultiLoop
    private let url: String
    let isHTTPS: Bool
    /// `scheme://authority`: transfers wait per origin for a slot (``CurlOriginSlots``).
    let origin: String

    /// The loop's bookkeeping for the origin (set when the loop takes the transfer).
    var slots: CurlOriginSlots?
    /// Whether the transfer waits in its origin's queue (no easy handle yet).
    var isQueued = false
    /// Response body bytes received (after decoding).
    private(set) var receivedBytes = 0

    var continuation: UnsafeContinuation<Response, any Error>?
    var isCancelled = false
    /// The easy handle while the transfer is attached to the loop.
    private(set) var handle: CurlEasyHandle?
    var easy: UnsafeMutableRawPointer? { handle?.pointer }

    // Response head.
    private var statusCode = 0
    private var fields = HTTPFields()
    private var headComplete = false
    private var expectedLength: Int64 = -1
    /// Bytes of the current response head so far, for ``ResponseHeadLimits``.
    private var headBytes = 0

    // Response body.
    private var buffer = ResponseBuffer()
    private var stream: ResponseBodyStream?
    private var failure: CourierError?

    // Request body.
    private var upload: UploadSource?

    /// Whether the deadline is nearer than the connect timeout, so that a timeout while
    /// connecting is the deadline's.
    private var deadlineComesFirst = false

    // Attempts.
    /// How often libcurl began to send the request: more than once when it retried on
    /// another connection by itself (a dead reused connection, a refused HTTP/2 stream).
    var sendAttempts = 0
    /// Whether the transfer runs again on a fresh connection after its first one died.
    private(set) var isOnFreshConnection = false

    // Pausing.
    private var isReceivePaused = false
    private var isSendPaused = false

    // Progress.
    private var lastDownload: Int64 = -1
    private var lastUpload: Int64 = -1

    private enum UploadSource {
        case memory(Data, offset: Int)
        case file(FileHandle)
        case stream(RequestBodyWriter, pump: Task<Void, Never>)
    }

    init(
        request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl,
        loop: CurlMultiLoop
    ) throws {
        guard let scheme = request.scheme, let authority = request.authority else {
            throw CourierError(kind: .invalidURL, message: "the request has no scheme or authority")
        }
        self.request = request
        self.body = body
        self.options = options
        self.control = control
        self.loop = loop
        self.origin = "\(scheme)://\(authority)"
        self.url = origin + (request.path ?? "/")
        self.isHTTPS = scheme.utf8.count == 5 && scheme.lowercased() == "https"
    }

    // MARK: Setting up (loop thread)

    /// The options of a transfer that stay on a reused easy handle: a handle whose previous
    /// transfer had the same profile keeps them (see ``CurlEasyHandle``).
    struct Profile: Equatable {
        var method: HTTPRequest.Method
        var hasBody: Bool
        var isHTTPS: Bool
        var reportsProgress: Bool
    }

    private var profile: Profile {
        Profile(
            method: request.method,
            hasBody: body != nil,
            isHTTPS: isHTTPS,
            reportsProgress: options.reportsProgress && control.observesProgress
        )
    }

    func configure(_ handle: CurlEasyHandle, transport: CurlTransport.Configuration) throws {
        if request.method == .head, body != nil {
            throw CourierError(kind: .bodyNotAllowed, message: "a HEAD request cannot carry a body")
        }
        self.handle = handle
        let easy = handle.pointer
        let profile = profile
        if handle.needsOptions(for: profile) {
            try configure(easy, profile: profile, errorBuffer: handle.errorBuffer, transport: transport)
            handle.profile = profile
        }
        // Per request: what differs even between transfers of the same profile.
        let me = Unmanaged.passUnretained(self).toOpaque()
        handle.errorBuffer[0] = 0
        try set(easy, CURLOPT_URL, url)
        try set(easy, CURLOPT_WRITEDATA, pointer: me)
        try set(easy, CURLOPT_HEADERDATA, pointer: me)
        try set(easy, CURLOPT_PREREQDATA, pointer: me)
        if isOnFreshConnection { try set(easy, CURLOPT_FRESH_CONNECT, 1) }
        if handle.isStallCheckArmed {
            // The previous transfer's stall check: this one arms its own once its head arrives.
            try set(easy, CURLOPT_LOW_SPEED_TIME, 0)
            handle.isStallCheckArmed = false
        }
        let connectMilliseconds = options.connectTimeout?.milliseconds ?? 0
        let deadlineMilliseconds = timeoutMilliseconds
        try set(easy, CURLOPT_CONNECTTIMEOUT_MS, connectMilliseconds)
        try set(easy, CURLOPT_TIMEOUT_MS, deadlineMilliseconds)
        // libcurl's text is the same for both limits while connecting; remember which is first.
        deadlineComesFirst =
            deadlineMilliseconds > 0
            && deadlineMilliseconds <= (connectMilliseconds > 0 ? connectMilliseconds : 300_000)
        let bufferSize = slots?.receiveBufferSize ?? CurlOriginSlots.defaultReceiveBufferSize
        // libcurl refuses a new size while the handle still holds its receive buffer (it keeps
        // it after HTTP/2 transfers); the handle then keeps the size it has.
        if handle.receiveBufferSize != bufferSize,
            ccurl_easy_setopt_long(easy, CURLOPT_BUFFERSIZE, bufferSize) == CURLE_OK
        {
            handle.receiveBufferSize = bufferSize
        }
        if let body {
            try prepareUpload(body)
            try set(easy, CURLOPT_POSTFIELDSIZE_LARGE, offT: body.length ?? -1)
            try set(easy, CURLOPT_READDATA, pointer: me)
            try set(easy, CURLOPT_SEEKDATA, pointer: me)
        }
        if profile.reportsProgress { try set(easy, CURLOPT_XFERINFODATA, pointer: me) }
        try check(handle.setHeaders(request.headerFields, hasBody: body != nil), "header list")
    }

    /// The time left until the deadline, for curl (`0`: none); what the transfer spent
    /// waiting for a slot counts.
    private var timeoutMilliseconds: Int {
        guard let deadline = options.deadline else { return 0 }
        return max(1, (deadline - .now).milliseconds)
    }

    /// Sets every option that belongs to the profile (on a new or reset handle).
    private func configure(
        _ easy: UnsafeMutableRawPointer,
        profile: Profile,
        errorBuffer: UnsafeMutablePointer<CChar>,
        transport: CurlTransport.Configuration
    ) throws {
        try set(easy, CURLOPT_NOSIGNAL, 1)
        try set(easy, CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        try check(ccurl_easy_setopt_write_function(easy, CurlCallbacks.write), "write callback")
        try check(ccurl_easy_setopt_header_function(easy, CurlCallbacks.header), "header callback")
        try check(ccurl_easy_setopt_prereq_function(easy, CurlCallbacks.prerequest), "prerequest callback")
        try set(easy, CURLOPT_ACCEPT_ENCODING, "")
        try set(
            easy,
            CURLOPT_HTTP_VERSION,
            transport.allowsHTTP2 ? Int(CURL_HTTP_VERSION_2TLS) : Int(CURL_HTTP_VERSION_1_1)
        )
        try set(easy, CURLOPT_PIPEWAIT, 1)
        try configureTLS(easy, transport: transport)  // decides itself whether TLS options apply
        // Redirects are followed by the session (RedirectMiddleware), never by libcurl.
        switch transport.proxy {
        case .environment: break
        case .none: try set(easy, CURLOPT_PROXY, "")
        case .url(let proxy, let excluded):
            try set(easy, CURLOPT_PROXY, proxy)
            if !excluded.isEmpty { try set(easy, CURLOPT_NOPROXY, excluded.joined(separator: ",")) }
        }
        let method = profile.method
        if method == .head {
            try set(easy, CURLOPT_NOBODY, 1)
        } else if method != .get || profile.hasBody {
            try set(easy, CURLOPT_CUSTOMREQUEST, method.rawValue)
        }
        if profile.hasBody {
            try set(easy, CURLOPT_POST, 1)
            try check(ccurl_easy_setopt_read_function(easy, CurlCallbacks.read), "read callback")
            try check(ccurl_easy_setopt_seek_function(easy, CurlCallbacks.seek), "seek callback")
        } else if method == .post || method == .put || method == .patch {
            try set(easy, CURLOPT_POST, 1)
            try set(easy, CURLOPT_POSTFIELDSIZE_LARGE, offT: 0)
            try set(easy, CURLOPT_POSTFIELDS, pointer: nil)
        }
        if profile.reportsProgress {
            try set(easy, CURLOPT_NOPROGRESS, 0)
            try check(ccurl_easy_setopt_xferinfo_function(easy, CurlCallbacks.progress), "progress callback")
        }
    }

    /// Opens the source the read callback takes the request body from.
    private func prepareUpload(_ body: RequestBody) throws {
        switch body.storage {
        case .data(let data):
            upload = .memory(data, offset: 0)
        case .file(let path, _):
            guard let handle = FileHandle(forReadingAtPath: path) else {
                throw CourierError(kind: .requestBodyFailed, message: "cannot open \(path) for reading")
            }
            upload = .file(handle)
        case .stream(_, _, let pump):
            let writer = RequestBodyWriter(limit: 256 << 10) { [weak self, loop] in
                guard let self else { return }
                loop.submit(.updatePause(self))
            }
            let task = Task {
                do {
                    try await pump(writer)
                    writer.finish()
                } catch {
                    writer.finish(throwing: error)
                }
            }
            upload = .stream(writer, pump: task)
        }
    }

    /// Called once the easy handle was added: applies a suspension requested before the start.
    /// Returns libcurl's result of pausing (`CURLE_OK` when there was nothing to pause).
    func attached() -> CURLcode {
        if control.attach({ [weak self, loop] suspended in
            guard let self else { return }
            _ = suspended
            loop.submit(.updatePause(self))
        }) {
            return applyPause()
        }
        return CURLE_OK
    }

    /// Releases per-transfer curl resources; the easy handle goes back to the loop.
    ///
    /// A handle whose transfer libcurl retried, or that failed, forgets its options and is
    /// reset before its next use: libcurl 7.88 counts retries per easy handle and only a reset
    /// clears the count, so without it the count builds up across requests (under HTTP/2
    /// GOAWAY, say) until a healthy request fails with "Connection died, tried 5 times".
    func detach(after code: CURLcode = CURLE_OK) {
        control.detach()
        closeUpload()
        if sendAttempts != 1 || code != CURLE_OK || isOnFreshConnection { handle?.profile = nil }
        handle = nil
    }

    private func closeUpload() {
        switch upload {
        case .file(let handle): try? handle.close()
        case .stream(let writer, let pump):
            writer.cancel(CancellationError())
            pump.cancel()
        case .memory, .none: break
        }
        upload = nil
    }

    /// Whether the failed transfer goes again, once, on a fresh connection — and if so,
    /// forgets what the failed attempt left behind.
    ///
    /// It does when a connection it reused — one an earlier transfer opened — died under it
    /// before any byte of a response arrived (no response, a send or receive error, an HTTP/2
    /// stream or connection error), and sending again is safe: the method is idempotent and
    /// the body can be sent again, or nothing of the request reached the connection at all.
    /// A transfer that died on a connection of its own is not sent again here: that is the
    /// retry policy's call, within its budget.
    func retriesOnFreshConnection(after code: CURLcode) -> Bool {
        guard !isOnFreshConnection, !isCancelled, continuation != nil, failure == nil,
            statusCode == 0, headBytes == 0, receivedBytes == 0, let easy
        else { return false }
        var connects = 0
        guard ccurl_easy_getinfo_long(easy, CURLINFO_NUM_CONNECTS, &connects) == CURLE_OK, connects == 0 else {
            return false
        }
        switch code {
        case CURLE_GOT_NOTHING, CURLE_SEND_ERROR, CURLE_RECV_ERROR, CURLE_HTTP2, CURLE_HTTP2_STREAM: break
        default: return false
        }
        guard body?.isReplayable ?? true else { return false }
        if !request.method.isIdempotent {
            var requestBytes = 0
            _ = ccurl_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestBytes)
            guard requestBytes == 0 else { return false }
        }
        isOnFreshConnection = true
        sendAttempts = 0
        fields = HTTPFields()
        headComplete = false
        expectedLength = -1
        lastDownload = -1
        lastUpload = -1
        return true
    }

    /// Counts an attempt to send the request, and says whether it may go.
    ///
    /// libcurl sends a request again by itself when a reused connection died before any
    /// byte of a response, or an HTTP/2 server refused the stream. For a method that is not
    /// idempotent that is safe only when nothing of the request reached the connection or the
    /// request carries an `Idempotency-Key`: libcurl 7.88 does not say which of the two
    /// happened, and after a dead connection the server may have processed the request.
    /// Otherwise the transfer fails with ``CourierError/Kind/connectionClosed``.
    func beginSendAttempt() -> Bool {
        sendAttempts += 1
        guard sendAttempts > 1, !request.method.isIdempotent, request.headerFields[.idempotencyKey] == nil,
            let easy
        else { return true }
        var requestBytes = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestBytes)
        guard requestBytes > 0 else { return true }
        failure = CourierError(
            kind: .connectionClosed,
            message: "the connection closed or the stream was refused before any response; a "
                + "\(request.method.rawValue) request without an Idempotency-Key is not sent again, since the server "
                + "may have processed it"
        )
        return false
    }

    /// Rewinds the request body for libcurl's own retries; `false` when it cannot.
    func rewindUpload(to offset: Int64) -> Bool {
        switch upload {
        case .memory(let data, _):
            guard offset >= 0, offset <= Int64(data.count) else { return false }
            upload = .memory(data, offset: Int(offset))
            return true
        case .file(let handle):
            return lseek(handle.fileDescriptor, off_t(offset), SEEK_SET) == off_t(offset)
        case .stream, .none:
            return false
        }
    }

    /// Pauses or resumes the easy handle to match the user's wish.
    ///
    /// Buffer-driven pauses (a full stream, an empty upload) are lifted here too: if the
    /// buffer is still full or empty, the next callback pauses the transfer again.
    ///
    /// Returns libcurl's result: resuming delivers buffered data through the callbacks at
    /// once, and a failure there ends the transfer (the loop completes it with this code).
    func applyPause() -> CURLcode {
        guard let easy else { return CURLE_OK }
        isReceivePaused = false
        isSendPaused = false
        let mask = control.isSuspended ? CURLPAUSE_RECV | CURLPAUSE_SEND : CURLPAUSE_CONT
        return curl_easy_pause(easy, mask)
    }

    // MARK: Callbacks (loop thread)

    /// Takes one header line; returns `false` to abort the transfer.
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        let bytes = line.trimmingLineEnd()
        if bytes.isEmpty {
            return finishHead()
        }
        let isStatusLine = bytes.starts(with: "HTTP/".utf8)
        headBytes = isStatusLine ? line.count : headBytes + line.count
        if line.count > ResponseHeadLimits.maximumLineBytes || headBytes > ResponseHeadLimits.maximumSectionBytes {
            failure = ResponseHeadLimits.exceeded(line: line.count > ResponseHeadLimits.maximumLineBytes)
            return false
        }
        if isStatusLine {
            statusCode = bytes.statusCode ?? 0
            fields = HTTPFields()
            fields.reserveCapacity(16)  // one allocation for a typical response head
            headComplete = false
            expectedLength = -1
            return true
        }
        if bytes.first == 0x20 || bytes.first == 0x09 {
            return true  // obsolete line folding is not supported; ignore the continuation
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return true }
        let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[..<colon])
        let valueBytes = UnsafeRawBufferPointer(rebasing: bytes[(colon + 1)...]).trimmingWhitespace()
        guard let name = ResponseFieldName.name(nameBytes) else { return true }
        let value = String(decoding: valueBytes, as: UTF8.self)
        if nameBytes.count == 14, name == .contentLength, let length = Int64(value) { expectedLength = length }
        fields.append(HTTPField(name: name, value: value))
        return true
    }

    private func finishHead() -> Bool {
        headBytes = 0  // trailers, a 1xx's successor or a redirect's response count anew
        guard statusCode >= 200 else { return true }  // 1xx interim response, or no status line yet
        headComplete = true
        armStallCheck()
        guard case .streamed(let bufferBytes) = options.responseBody, let continuation else { return true }
        self.continuation = nil
        let stream = ResponseBodyStream(
            highWater: bufferBytes,
            onDrained: { [weak self, loop] in
                guard let self else { return }
                loop.submit(.updatePause(self))
            },
            onCancel: { [weak self, loop] in
                guard let self else { return }
                loop.submit(.cancel(self))
            }
        )
        self.stream = stream
        // The deadline bounds a stream until its head; from here the stall timeout bounds it.
        if let easy { _ = ccurl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, 0) }
        let head = HTTPResponse(status: .standard(code: statusCode), headerFields: fields)
        continuation.resume(
            returning: Response(head: head, body: Response.Body(stream: .init(stream)), metrics: metrics())
        )
        return true
    }

    /// Arms the stall timeout once the response head is there: from now on, less than one
    /// byte a second in either direction for that long fails the transfer as stalled. Until
    /// the head, the deadline alone bounds the wait, so a server that takes long to answer is
    /// not mistaken for a stalled one. (libcurl reads these options on every check, as it
    /// does the timeout this also lifts for streams.)
    private func armStallCheck() {
        guard let stall = options.stallTimeout, let handle else { return }
        let seconds = max(1, (stall.milliseconds + 999) / 1000)  // libcurl counts whole seconds
        if ccurl_easy_setopt_long(handle.pointer, CURLOPT_LOW_SPEED_LIMIT, 1) == CURLE_OK,
            ccurl_easy_setopt_long(handle.pointer, CURLOPT_LOW_SPEED_TIME, seconds) == CURLE_OK
        {
            handle.isStallCheckArmed = true
        }
    }

    /// Takes body bytes. Returns the count taken; anything else makes curl pause or fail.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if let stream {
            if stream.offer(Data(bytes)) {
                receivedBytes += bytes.count
                return bytes.count
            }
            isReceivePaused = true
            return Int(ccurl_writefunc_pause())
        }
        guard case .buffered(let limit) = options.responseBody else { return bytes.count }
        if buffer.count + bytes.count > limit {
            failure = CourierError(kind: .responseTooLarge, message: "the response body exceeds \(limit) bytes")
            return 0
        }
        if buffer.capacity == 0, expectedLength > 0, expectedLength <= Int64(limit) {
            buffer.reserve(Int(expectedLength))
        }
        buffer.append(bytes)
        receivedBytes += bytes.count
        return bytes.count
    }

    /// Fills curl's upload buffer.
    func provideUpload(_ destination: UnsafeMutableRawBufferPointer) -> Int {
        switch upload {
        case .memory(let data, let offset):
            let count = min(destination.count, data.count - offset)
            guard count > 0 else { return 0 }
            data.withUnsafeBytes { source in
                destination.baseAddress!.copyMemory(from: source.baseAddress! + offset, byteCount: count)
            }
            upload = .memory(data, offset: offset + count)
            return count
        case .file(let handle):
            let count = read(handle.fileDescriptor, destination.baseAddress, destination.count)
            if count < 0 {
                failure = CourierError(
                    kind: .requestBodyFailed,
                    message: "reading the request body file failed: errno \(errno)"
                )
                return Int(ccurl_readfunc_abort())
            }
            return count
        case .stream(let writer, _):
            switch writer.read(into: destination) {
            case .bytes(let count): return count
            case .end: return 0
            case .wouldBlock:
                isSendPaused = true
                return Int(ccurl_readfunc_pause())
            case .failed(let error):
                failure = CourierError(kind: .requestBodyFailed, message: "the request body stream failed: \(error)")
                return Int(ccurl_readfunc_abort())
            }
        case .none:
            return 0
        }
    }

    func progress(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64) {
        if uploaded != lastUpload, uploaded > 0 || uploadTotal > 0 {
            lastUpload = uploaded
            control.reportUpload(
                NetworkTask.Progress(completedBytes: uploaded, expectedBytes: uploadTotal > 0 ? uploadTotal : nil)
            )
        }
        // Report downloads in steps of 64 KiB, and the last byte.
        if downloaded != lastDownload,
            downloaded - lastDownload >= 65_536 || (downloadTotal > 0 && downloaded == downloadTotal)
        {
            lastDownload = downloaded
            control.reportDownload(
                NetworkTask.Progress(completedBytes: downloaded, expectedBytes: downloadTotal > 0 ? downloadTotal : nil)
            )
        }
    }

    // MARK: Ending (loop thread)

    func complete(_ code: CURLcode) {
        guard code == CURLE_OK else {
            // A pin mismatch or an untrusted host (CurlTransfer+TLS.swift).
            if failure == nil, let refused = securityFailure(code) {
                fail(refused)
                return
            }
            var error =
                failure ?? proxyFailure(code)
                ?? CourierError(
                    curlCode: code,
                    detail: handle?.errorText ?? "",
                    https: isHTTPS,
                    inHead: !headComplete && statusCode > 0
                )
            if statusCode > 0 { error.receivedResponse = true }
            if error.kind == .connectTimedOut, deadlineComesFirst {
                // libcurl names both limits alike while connecting: the deadline fired.
                error = CourierError(
                    kind: .timedOut,
                    message: "the request's deadline passed while connecting",
                    curlCode: Int(code.rawValue),
                    curlDetail: error.curlDetail
                )
            }
            fail(error)
            return
        }
        if let stream {
            stream.finish()
            return
        }
        let head = HTTPResponse(status: .standard(code: statusCode), headerFields: fields)
        let data = buffer.takeData()
        let metrics = metrics()
        // The last step of progress, also for a body too short for a 64 KiB step.
        if control.observesProgress, let received = metrics?.bytesReceived, received > 0, received != lastDownload {
            lastDownload = received
            control.reportDownload(NetworkTask.Progress(completedBytes: received, expectedBytes: received))
        }
        let response = Response(head: head, body: Response.Body(data), metrics: metrics)
        continuation?.resume(returning: response)
        continuation = nil
    }

    /// A proxy that refused the tunnel (a CONNECT answered with 407, 403, 502…).
    private func proxyFailure(_ code: CURLcode) -> CourierError? {
        guard let easy else { return nil }
        var connectCode = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        guard connectCode >= 300 else { return nil }
        let reason =
            connectCode == 407
            ? "the proxy requires authentication (407)" : "the proxy refused the tunnel with status \(connectCode)"
        return CourierError(kind: .proxyFailure, message: reason, curlCode: Int(code.rawValue))
    }

    func fail(_ error: any Error) {
        if let continuation {
            self.continuation = nil
            continuation.resume(throwing: error)
        } else {
            stream?.finish(throwing: error)
        }
        buffer.free()
    }

    private func metrics() -> Response.Metrics? {
        guard let easy else { return nil }
        func time(_ info: CURLINFO) -> Duration {
            var value: Int64 = 0
            _ = ccurl_easy_getinfo_off_t(easy, info, &value)
            return .microseconds(value)
        }
        func offT(_ info: CURLINFO) -> Int64 {
            var value: Int64 = 0
            _ = ccurl_easy_getinfo_off_t(easy, info, &value)
            return value
        }
        func long(_ info: CURLINFO) -> Int {
            var value = 0
            _ = ccurl_easy_getinfo_long(easy, info, &value)
            return value
        }
        let version: Response.Metrics.HTTPVersion =
            switch long(CURLINFO_HTTP_VERSION) {
            case Int(CURL_HTTP_VERSION_1_0): .http1_0
            case Int(CURL_HTTP_VERSION_1_1): .http1_1
            case Int(CURL_HTTP_VERSION_2_0): .http2
            case Int(CURL_HTTP_VERSION_3): .http3
            default: .unknown
            }
        return Response.Metrics(
            nameLookup: time(CURLINFO_NAMELOOKUP_TIME_T),
            connect: time(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: time(CURLINFO_APPCONNECT_TIME_T),
            timeToFirstByte: time(CURLINFO_STARTTRANSFER_TIME_T),
            total: time(CURLINFO_TOTAL_TIME_T),
            bytesSent: offT(CURLINFO_SIZE_UPLOAD_T),
            bytesReceived: offT(CURLINFO_SIZE_DOWNLOAD_T),
            httpVersion: version,
            isConnectionReused: long(CURLINFO_NUM_CONNECTS) == 0
        )
    }

    // MARK: Option helpers

    func check(_ code: CURLcode, _ what: @autoclosure () -> String) throws {
        guard code == CURLE_OK else {
            throw CourierError(
                kind: .transportFailure,
                message: "cannot set \(what()): \(String(cString: curl_easy_strerror(code)))",
                curlCode: Int(code.rawValue)
            )
        }
    }

    func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: Int) throws {
        try check(ccurl_easy_setopt_long(easy, option, value), "option \(option.rawValue)")
    }

    func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, offT value: Int64) throws {
        try check(ccurl_easy_setopt_off_t(easy, option, value), "option \(option.rawValue)")
    }

    func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, _ value: String?) throws {
        try check(ccurl_easy_setopt_string(easy, option, value), "option \(option.rawValue)")
    }

    func set(_ easy: UnsafeMutableRawPointer, _ option: CURLoption, pointer: UnsafeMutableRawPointer?) throws {
        try check(ccurl_easy_setopt_ptr(easy, option, pointer), "option \(option.rawValue)")
    }
}

extension Duration {
    var milliseconds: Int {
        let (seconds, attoseconds) = components
        return Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000)
    }
}

extension UnsafeRawBufferPointer {
    func trimmingLineEnd() -> UnsafeRawBufferPointer {
        var end = count
        while end > 0, self[end - 1] == 0x0A || self[end - 1] == 0x0D { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: self[..<end])
    }

    func trimmingWhitespace() -> UnsafeRawBufferPointer {
        var start = 0
        var end = count
        while start < end, self[start] == 0x20 || self[start] == 0x09 { start += 1 }
        while end > start, self[end - 1] == 0x20 || self[end - 1] == 0x09 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: self[start..<end])
    }

    /// The status code of a status line such as `HTTP/1.1 200 OK` or `HTTP/2 204`.
    var statusCode: Int? {
        guard let space = firstIndex(of: 0x20), space + 3 < count else { return nil }
        var code = 0
        for index in (space + 1)..<(space + 4) {
            let digit = Int(self[index]) - 48
            guard (0...9).contains(digit) else { return nil }
            code = code * 10 + digit
        }
        return code
    }
}
