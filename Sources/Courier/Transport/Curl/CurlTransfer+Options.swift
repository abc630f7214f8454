internal import CCurlShim
import HTTPTypes

/// Setting a transfer's options on its easy handle (loop thread).
extension CurlTransfer {
    /// The options of a transfer that stay on a reused easy handle: a handle whose previous
    /// transfer had the same profile keeps them (see ``CurlEasyHandle``).
    struct Profile: Equatable {
        var method: HTTPRequest.Method
        var hasBody: Bool
        var isHTTPS: Bool
        var reportsProgress: Bool
        var sendsTrailers: Bool
        /// The number of the transfer's ``TrustGeneration``: its TLS options differ per generation.
        var trustGeneration: UInt64
    }

    var profile: Profile {
        Profile(
            method: request.method,
            hasBody: body != nil,
            isHTTPS: isHTTPS,
            reportsProgress: options.reportsProgress && control.observesProgress,
            sendsTrailers: body?.hasTrailers ?? false,
            trustGeneration: trustGeneration?.number ?? 0
        )
    }

    func configure(_ handle: CurlEasyHandle, transport: CurlTransport.Configuration) throws {
        if request.method == .head, body != nil {
            throw CourierError(kind: .bodyNotAllowed, message: "a HEAD request cannot carry a body")
        }
        // The handle's running parts are fresh: a new handle's, or reset when its last transfer
        // ended (`CurlEasyHandle.transferEnded()`); a transfer that goes again on a fresh
        // connection reset what its attempt left (`retriesOnFreshConnection(after:)`).
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
        let path = request.path ?? "/"
        if !handle.hasURL(origin, path: path) {
            try set(easy, CURLOPT_URL, "\(origin.scheme)://\(origin.authority)\(path)")
            handle.url = (origin, path)
        }
        try set(easy, CURLOPT_WRITEDATA, pointer: me)
        try set(easy, CURLOPT_HEADERDATA, pointer: me)
        try set(easy, CURLOPT_PREREQDATA, pointer: me)
        if isOnFreshConnection { try set(easy, CURLOPT_FRESH_CONNECT, 1) }
        let connectMilliseconds = options.connectTimeout?.milliseconds ?? 0
        let deadlineMilliseconds = timeoutMilliseconds
        try set(easy, CURLOPT_CONNECTTIMEOUT_MS, connectMilliseconds)
        try set(easy, CURLOPT_TIMEOUT_MS, deadlineMilliseconds)
        // libcurl's text is the same for both limits while connecting; remember which is first.
        running.deadlineComesFirst =
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
            try set(easy, CURLOPT_POSTFIELDSIZE_LARGE, offT: body.framedLength ?? -1)
            try set(easy, CURLOPT_READDATA, pointer: me)
            try set(easy, CURLOPT_SEEKDATA, pointer: me)
            if profile.sendsTrailers {
                // Beside its data: libcurl forgets the function once it has sent trailers, and a
                // handle that sent them serves no other transfer (CurlEasyHandle.isReusable).
                try check(ccurl_easy_setopt_trailer_function(easy, CurlCallbacks.trailers), "trailer callback")
                try set(easy, CURLOPT_TRAILERDATA, pointer: me)
            }
        }
        try watchRefusedStreams(handle, me: me, transport: transport)
        if profile.reportsProgress { try set(easy, CURLOPT_XFERINFODATA, pointer: me) }
        try check(handle.setHeaders(request.headerFields, hasBody: body != nil), "header list")
    }

    /// Whether a refused HTTP/2 stream must be told from a dead connection: a request that may
    /// not go again otherwise, where a refused stream can happen (HTTPS, HTTP/2 allowed, not a
    /// body with trailers, not an origin known to speak HTTP/1.1).
    private func watchesRefusedStreams(_ transport: CurlTransport.Configuration) -> Bool {
        isHTTPS && transport.allowsHTTP2 && !request.method.isIdempotent
            && request.headerFields[.idempotencyKey] == nil && !(body?.hasTrailers ?? false)
            && slots?.isMultiplexed != false
    }

    /// Turns libcurl's informational text on for a transfer that watches for refused streams
    /// (libcurl says that a server refused a stream only there), off for the others. Per
    /// request, not per profile: requests with and without an `Idempotency-Key` share handles.
    private func watchRefusedStreams(
        _ handle: CurlEasyHandle,
        me: UnsafeMutableRawPointer,
        transport: CurlTransport.Configuration
    ) throws {
        let watches = watchesRefusedStreams(transport)
        if watches { try set(handle.pointer, CURLOPT_DEBUGDATA, pointer: me) }
        guard watches != handle.watchesRefusedStreams else { return }
        if watches {
            try check(ccurl_easy_setopt_debug_function(handle.pointer, CurlCallbacks.debug), "debug callback")
        }
        try set(handle.pointer, CURLOPT_VERBOSE, watches ? 1 : 0)
        handle.watchesRefusedStreams = watches
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
        // Trailer fields travel in HTTP/1.1's chunked encoding: libcurl sends none over HTTP/2.
        try set(
            easy,
            CURLOPT_HTTP_VERSION,
            transport.allowsHTTP2 && !profile.sendsTrailers ? Int(CURL_HTTP_VERSION_2TLS) : Int(CURL_HTTP_VERSION_1_1)
        )
        try set(easy, CURLOPT_PIPEWAIT, 1)
        // A proxy's answer to CONNECT is not the response: its head stays out of the header
        // callback (its status is read with CURLINFO_HTTP_CONNECTCODE).
        try set(easy, CURLOPT_SUPPRESS_CONNECT_HEADERS, 1)
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
        // libcurl copies the string. `withCString` lends a native string's own bytes; passing
        // an optional `String` directly would copy it into a new array first.
        let code =
            if let value {
                value.withCString { ccurl_easy_setopt_string(easy, option, $0) }
            } else {
                ccurl_easy_setopt_string(easy, option, nil)
            }
        try check(code, "option \(option.rawValue)")
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
