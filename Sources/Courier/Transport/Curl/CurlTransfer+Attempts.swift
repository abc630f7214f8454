internal import CCurlShim
import HTTPTypes

/// Attempts: libcurl's own retries, and going again on a fresh connection (loop thread).
extension CurlTransfer {
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
        guard !isOnFreshConnection, machine.callerIsWaiting, !machine.hasEnded, running.failure == nil,
            running.head.statusCode == 0, running.head.headBytes == 0, running.receivedBytes == 0, let easy
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
        guard machine.restart() else { return false }
        isOnFreshConnection = true
        sendAttempts = 0
        running.stallWatched = false
        streamRefused = false
        running.head.reset()
        running.reportedProgress.reset()
        return true
    }

    /// Reads a line of libcurl's informational text (transfers that watch for refused streams).
    ///
    /// libcurl 7.88 retries a refused HTTP/2 stream by itself and says so in one of two ways:
    /// "REFUSED_STREAM, retrying a fresh connect" when the stream was on a connection of the
    /// transfer's own, and only "Connection died, retrying a fresh connect" when it was on a
    /// reused one — the words it also uses when a reused connection failed under a request the
    /// server may have processed. Only the first is proof that the server did not process the
    /// request, so only the first lets a request that may not go again go again.
    ///
    /// The text also holds the request's header fields, credentials included: it is read for
    /// this one line and never kept or logged.
    func readInformation(_ text: UnsafeRawBufferPointer) {
        if text.starts(with: "REFUSED_STREAM".utf8) { streamRefused = true }
    }

    /// Counts an attempt to send the request, and says whether it may go.
    ///
    /// libcurl sends a request again by itself when a reused connection died before any
    /// byte of a response, or an HTTP/2 server refused the stream. For a method that is not
    /// idempotent that is safe when nothing of the request reached the connection, when the
    /// request carries an `Idempotency-Key`, or — once — when the server provably refused the
    /// stream: a refused stream was not processed (see ``readInformation(_:)``). After a dead
    /// connection the server may have processed the request: then the transfer fails with
    /// ``CourierError/Kind/connectionClosed``.
    func beginSendAttempt() -> Bool {
        sendAttempts += 1
        guard sendAttempts > 1, !request.method.isIdempotent, request.headerFields[.idempotencyKey] == nil,
            let easy
        else { return true }
        defer { streamRefused = false }
        if streamRefused, !retriedRefusedStream, body?.isReplayable ?? true {
            retriedRefusedStream = true
            return true
        }
        var requestBytes = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_REQUEST_SIZE, &requestBytes)
        guard requestBytes > 0 else { return true }
        running.failure = CourierError(
            kind: .connectionClosed,
            message: "the connection closed or the stream was refused before any response; a "
                + "\(request.method.rawValue) request without an Idempotency-Key is not sent again, since the server "
                + "may have processed it"
        )
        return false
    }
}
