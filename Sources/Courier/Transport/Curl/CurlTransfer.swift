internal import CCurlShim
import Foundation
import HTTPTypes

/// One request on its way through a ``CurlMultiLoop``.
///
/// The transfer holds what libcurl's callbacks need and applies the decisions of its
/// ``StateMachine``; its parts live beside it: options (CurlTransfer+Options.swift), the
/// request body (CurlTransfer+Upload.swift), the response body's buffer or stream
/// (CurlTransfer+ResponseBody.swift), attempts (CurlTransfer+Attempts.swift), TLS
/// (CurlTransfer+TLS.swift), error mapping (CurlTransfer+Failure.swift), metrics
/// (CurlTransfer+Metrics.swift), the response head (``ResponseHeadParser``) and progress
/// (``TransferProgress``). What only a running transfer uses lives in the easy handle it runs
/// on (``Running``, CurlTransfer+Running.swift), and its options and control in the request's
/// context, which it shares with the chain: a transfer waiting for a connection is small.
///
/// Confined to the loop thread: the caller writes ``continuation`` before it submits the
/// start command (the inbox lock orders the two); from then on every field is read and
/// written only on the loop thread, in curl's callbacks and in the loop's commands. Debug
/// builds check that (``assertConfined()``). It is `@unchecked Sendable` only so that
/// callbacks on other threads can name it in a command for the loop.
final class CurlTransfer: @unchecked Sendable {
    // The stored properties are declared in the order that packs them tightest (a class keeps
    // them in declaration order, and every request in flight keeps a transfer): the flags and
    // the state machine fill what the optional body leaves of its last word.
    let request: HTTPRequest
    let body: RequestBody?
    /// Whether the transfer runs again on a fresh connection after its first one died.
    var isOnFreshConnection = false
    /// Whether libcurl's text says that the HTTP/2 server refused the stream (and it retries).
    var streamRefused = false
    /// Whether the transfer already went again after a refused stream.
    var retriedRefusedStream = false
    /// Whether the stream's batch is to be published at the end of the loop's pass.
    var isStreamBatchScheduled = false
    /// Where the transfer is, and who hears of its result.
    var machine: StateMachine
    /// How often libcurl began to send the request: more than once when it retried on
    /// another connection by itself (a dead reused connection, a refused HTTP/2 stream).
    var sendAttempts = 0

    /// The request's context, shared with the chain that sent it rather than copied: the
    /// transfer needs its options and control, and every transfer in flight, a waiting one too,
    /// keeps eight bytes for them instead of about 120.
    let context: MiddlewareContext
    var options: TransferOptions { context.options }
    var control: TransferControl { context.control }
    unowned let loop: CurlMultiLoop
    /// Transfers wait per origin for a slot (``CurlOriginSlots``).
    var origin: CurlOriginSlots.Origin {
        CurlOriginSlots.Origin(scheme: request.scheme ?? "", authority: request.authority ?? "")
    }
    var isHTTPS: Bool {
        guard let scheme = request.scheme else { return false }
        return CurlOriginSlots.Origin.isSecure(scheme: scheme)
    }
    /// The most bytes a buffered body may have.
    var bufferLimit: Int {
        guard case .buffered(let limit) = options.responseBody else { return 0 }
        return limit
    }

    /// The loop's bookkeeping for the origin (set when the loop takes the transfer).
    var slots: CurlOriginSlots?

    /// Who waits for the response: resumed once, by ``hand(_:)`` or with an error.
    var continuation: UnsafeContinuation<Void, any Error>?
    /// The easy handle while the transfer is attached to the loop.
    var handle: CurlEasyHandle?
    var easy: UnsafeMutableRawPointer? { handle?.pointer }

    // The response head, progress, the request body's source, the stall watch and a callback's
    // failure live in the easy handle while the transfer runs (CurlTransfer+Running.swift).

    // Response body (CurlTransfer+ResponseBody.swift).
    /// The buffered body's bytes so far.
    var buffer = ResponseBuffer()
    /// The streamed body, once its head went to the caller. Its bytes are batched in
    /// ``buffer`` and published once per pass of the loop.
    var stream: ResponseBodyStream?
    /// The stream's unread bytes when the last batch was published: at least what is unread now.
    var streamUnread = 0
    /// Bytes the stream received in the loop's current pass.
    var streamBytesThisPass = 0
    /// The capacity of the stream's next batch buffer, sized from the last batch.
    var streamBatchCapacity = 16 << 10

    /// The trust set the transfer runs under, on a secured transport (``TransportTrust``).
    var trustGeneration: TrustGeneration?
    /// The `x5t#S256` of the client certificate the transfer's connection presents, when the
    /// transfer asked for a report (``CertificateBinding/report``); its response carries it.
    var presentedCertificateThumbprint: String?
    /// The response between ``hand(_:)`` on the loop thread and ``takeResponse()`` in the caller,
    /// which reads it only after the continuation resumed. The continuation carries no value:
    /// a `Response` result would cost a result buffer in each async frame between the caller
    /// and the continuation, and every request in flight keeps those frames.
    private var handedResponse: Response?

    init(
        request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        loop: CurlMultiLoop
    ) throws {
        guard request.scheme != nil, request.authority != nil else {
            throw CourierError(kind: .invalidURL, message: "the request has no scheme or authority")
        }
        self.request = request
        self.body = body
        self.context = context
        self.loop = loop
        switch context.options.responseBody {
        case .buffered: machine = StateMachine(delivery: .buffered)
        case .streamed: machine = StateMachine(delivery: .streamed)
        }
    }

    /// Debug builds: traps unless the caller runs on the loop thread, or the transfer was
    /// never handed to the loop (then its creator still owns it).
    func assertConfined() {
        assert(loop.isCurrent || machine.state == .created(cancelled: false), "a transfer used off the loop thread")
    }

    /// Whether the transfer waits at its origin for a slot (no easy handle yet).
    var isQueued: Bool { machine.isQueued }

    // MARK: The loop's events (loop thread)

    /// The loop takes the transfer; see ``StateMachine/start(hasSlot:)``.
    func start(hasSlot: Bool) -> StateMachine.StartAction {
        assertConfined()
        return machine.start(hasSlot: hasSlot)
    }

    /// A slot freed up: `true` when the transfer was waiting for it and now runs.
    func slotGranted() -> Bool {
        assertConfined()
        return machine.slotGranted()
    }

    /// The transfer is cancelled; see ``StateMachine/cancel()``.
    func cancel() -> StateMachine.CancelAction {
        assertConfined()
        return machine.cancel()
    }

    /// Called once the easy handle was added: applies a suspension requested before the start.
    /// Returns libcurl's result of pausing (`CURLE_OK` when there was nothing to pause).
    func attached() -> CURLcode {
        // A plain `send` cannot be suspended: no pause handler (a closure holding a weak
        // reference, which would also move the transfer's reference counts to a side table).
        guard !control.isInert else { return CURLE_OK }
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
        // A handle that gave raw chunked bytes must not keep doing so: reset it too.
        if sendAttempts != 1 || code != CURLE_OK || isOnFreshConnection || running.chunkedBody != nil {
            handle?.profile = nil
        }
        if body?.hasTrailers == true { handle?.isReusable = false }
        handle = nil
    }

    /// Pauses or resumes the easy handle to match the user's wish.
    ///
    /// Buffer-driven pauses (a full stream, an empty upload) are lifted here too: if the
    /// buffer is still full or empty, the next callback pauses the transfer again.
    ///
    /// Returns libcurl's result: resuming delivers buffered data through the callbacks at
    /// once, and a failure there ends the transfer (the loop completes it with this code).
    func applyPause() -> CURLcode {
        assertConfined()
        guard machine.updatePause(), let easy else { return CURLE_OK }
        if running.stallWatched { watchForStalls() }  // a rest ended: the clock starts again
        let mask = control.isSuspended ? CURLPAUSE_RECV | CURLPAUSE_SEND : CURLPAUSE_CONT
        return curl_easy_pause(easy, mask)
    }

    // MARK: Callbacks (loop thread)

    /// Takes one header line; returns `false` to abort the transfer.
    func receiveHeader(_ line: UnsafeRawBufferPointer) -> Bool {
        assertConfined()
        moved()
        switch running.head.receive(line, memo: slots?.headMemo) {
        case .field, .trailer:
            return true
        case .statusLine:
            machine.statusLineReceived()
            return true
        case .end:
            return finishHead()
        case .tooLarge(let isLine):
            running.failure = ResponseHeadLimits.exceeded(line: isLine)
            return false
        case .malformed(let malformation):
            running.failure = CourierError(kind: .malformedResponse, message: malformation.message)
            return false
        }
    }

    private func finishHead() -> Bool {
        switch machine.headReceived(status: running.head.statusCode) {
        case .interim:
            return true
        case .final:
            watchForStalls()
            beginResponseBody()
            return true
        case .finalStreamed:
            watchForStalls()
            openStream()
            beginResponseBody()
            return true
        case .abort:
            return false
        }
    }

    /// Takes libcurl's progress figures.
    func progress(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64) {
        assertConfined()
        running.reportedProgress.update(
            downloadTotal: downloadTotal,
            downloaded: downloaded,
            uploadTotal: uploadTotal,
            uploaded: uploaded,
            to: control
        )
    }

    // MARK: Ending (loop thread)

    /// libcurl ended the transfer with `code`: answers whoever waits.
    func complete(_ code: CURLcode) {
        assertConfined()
        switch machine.completed(successfully: code == CURLE_OK) {
        case .ignore:
            return
        case .fail(let recipient):
            deliver(error(for: code), to: recipient)
        case .finishStream:
            finishStream()
        case .respond:
            respond()
        }
    }

    /// Gives the caller the buffered response.
    func respond() {
        let responseHead =
            running.head.responseHead
            ?? HTTPResponse(status: .standard(code: running.head.statusCode), headerFields: running.head.fields)
        let data = buffer.takeData()
        let metrics = metrics()
        // The last step of progress, also for a body too short for a 64 KiB step.
        if control.observesProgress, let received = metrics?.bytesReceived {
            running.reportedProgress.finish(received: received, to: control)
        }
        let body = running.head.trailerFields.map { Response.Body(data, trailerFields: $0) } ?? Response.Body(data)
        hand(Response(head: responseHead, body: body, metrics: metrics))
    }

    /// Gives the caller its response: the continuation's only success.
    func hand(_ response: Response) {
        guard let continuation else { return }
        self.continuation = nil
        handedResponse = response
        continuation.resume()
    }

    /// The response ``hand(_:)`` gave, once the continuation resumed without an error.
    @inline(never)
    func takeResponse() -> Response {
        guard let response = handedResponse else {
            preconditionFailure("a transfer's continuation resumed without a response")
        }
        handedResponse = nil
        guard let presentedCertificateThumbprint else { return response }
        var reported = response
        reported.clientCertificateThumbprint = presentedCertificateThumbprint
        return reported
    }

    /// Fails the transfer for a reason of the loop's; nothing when it ended already.
    func fail(_ error: any Error) {
        assertConfined()
        deliver(error, to: machine.fail())
    }

    /// Tells `recipient` that the transfer failed with `error`, and frees the body buffer.
    func deliver(_ error: any Error, to recipient: StateMachine.Recipient) {
        switch recipient {
        case .caller:
            if let continuation {
                self.continuation = nil
                continuation.resume(throwing: error)
            }
        case .stream:
            publishStreamBatch()  // what arrived before the failure is read first
            stream?.finish(throwing: error)
        case .nobody:
            break
        }
        buffer.free()
    }
}
