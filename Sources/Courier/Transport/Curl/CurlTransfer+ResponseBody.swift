internal import CCurlShim
import Foundation
import HTTPTypes

/// The response body's two sinks: a buffer returned with the head, or a stream the caller
/// reads while the transfer goes on (loop thread).
///
/// The response ends when the response ends, whatever the request body is doing: when the whole
/// response has arrived while the request body is still being sent (full duplex), the caller
/// gets it — or the end of its stream — at once, and the upload goes on until the request body
/// ends.
extension CurlTransfer {
    /// Takes body bytes. Returns the count taken; anything else makes curl pause or fail.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        assertConfined()
        moved()
        if running.chunkedBody != nil { return receiveChunked(bytes) }
        let taken = take(bytes)
        // While the request body still goes, libcurl does not end the transfer when the
        // response is complete: the length it announced tells, counted in the bytes taken
        // (libcurl may hand one read over in several calls). A content-coded body's length is
        // not its decoded length: it ends with the transfer.
        if !running.uploadEnded, taken == bytes.count, running.head.expectedLength > 0, !running.head.isChunked,
            !running.head.isContentEncoded,
            Int64(running.receivedBytes) >= running.head.expectedLength
        {
            endResponse()
        }
        return taken
    }

    /// Raw chunked bytes: the data they frame goes to the sink, all of it or none (a refused
    /// chunk comes again from libcurl after the pause); the last chunk ends the response.
    private func receiveChunked(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let reader = running.chunkedBody else { return 0 }
        var decoder = reader.decoder
        var data = Data()
        let outcome = decoder.decode(bytes, into: &data)
        if case .malformed(let reason) = outcome {
            running.failure = CourierError(
                kind: .malformedResponse,
                message: "the chunked response body is malformed: \(reason)"
            )
            return 0
        }
        if !data.isEmpty {
            let taken = data.withUnsafeBytes { take($0) }
            guard taken == data.count else { return taken }  // a pause or a failure
        }
        reader.decoder = decoder
        if outcome == .end {
            running.head.receiveTrailers(decoder.trailerFields)
            endResponse()
        }
        return bytes.count
    }

    /// Decides, once the final head is there, how the end of the response will be known while
    /// the request body is still being sent.
    func beginResponseBody() {
        // A 417 to `Expect: 100-continue` is answered by libcurl itself, which sends the request
        // again without the expectation: the response is the next one.
        guard body != nil, !running.uploadEnded, running.head.statusCode != 417, let easy else { return }
        if running.head.isChunked {  // the chunked framing wins over a Content-Length
            guard !running.head.isContentEncoded, running.head.isHTTP1 else { return }
            // libcurl keeps reading the framing and hands over the raw bytes, which Courier
            // reads itself. (A content-coded body is left to libcurl: then the response ends
            // with the transfer.)
            guard ccurl_easy_setopt_long(easy, CURLOPT_HTTP_TRANSFER_DECODING, 0) == CURLE_OK else { return }
            running.chunkedBody = ChunkedBodyReader()
        } else if request.method == .head || running.head.statusCode == 204 || running.head.statusCode == 304
            || running.head.expectedLength == 0
        {
            endResponse()  // no body follows this head
        }
    }

    /// The whole response arrived before the transfer ended.
    func endResponse() {
        switch machine.responseEnded() {
        case .respond: respond()
        case .finishStream: finishStream()
        case .ignore: break
        }
    }

    /// Hands bytes to the buffer or the stream. Returns the count taken; anything else makes
    /// curl pause or fail.
    private func take(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch machine.bodyReceived() {
        case .stream:
            return batchForStream(bytes)
        case .buffer:
            if buffer.count + bytes.count > bufferLimit {
                running.failure = CourierError(
                    kind: .responseTooLarge,
                    message: "the response body exceeds \(bufferLimit) bytes"
                )
                return 0
            }
            let expectedLength = running.head.expectedLength
            if buffer.capacity == 0, expectedLength > 0, expectedLength <= Int64(bufferLimit) {
                buffer.reserve(Int(expectedLength))
            }
            buffer.append(bytes)
            running.receivedBytes += bytes.count
            return bytes.count
        case .discard:
            return bytes.count
        case .abort:
            return 0
        }
    }

    /// Adds streamed bytes to the batch the stream gets at the end of the loop's pass (or
    /// sooner, when the batch is full). Pauses the transfer instead when the consumer has
    /// `highWater` bytes or more unread.
    ///
    /// The batch lives in the buffer a buffered body would use, taken from the pool of response
    /// buffers, so that a steady stream does not fault in fresh pages for every read.
    private func batchForStream(_ bytes: UnsafeRawBufferPointer) -> Int {
        guard let stream else { return 0 }
        if streamUnread + buffer.count >= stream.highWater {
            // Full as far as this thread knows: publish, and learn what the consumer has read.
            publishStreamBatch()
            if streamUnread >= stream.highWater, stream.pauseIfFull() {
                machine.receivePaused()
                return Int(ccurl_writefunc_pause())
            }
        }
        // A new batch starts in a buffer of the size the last batch asked for: a buffer kept
        // from a burst would make every smaller batch a copy.
        if buffer.count == 0, buffer.capacity > streamBatchCapacity * 2 { buffer.free() }
        if buffer.count + bytes.count > buffer.capacity {
            publishStreamBatch()
            buffer.reserve(max(bytes.count, streamBatchCapacity))
        }
        if !isStreamBatchScheduled {
            isStreamBatchScheduled = true
            loop.publishAfterPass(self)
        }
        buffer.append(bytes)
        running.receivedBytes += bytes.count
        streamBytesThisPass += bytes.count
        return bytes.count
    }

    /// Hands the batch to the stream (loop thread): the end of a pass over the network, a full
    /// batch, a pause or the end of the body.
    ///
    /// The batch's buffer goes with it, without a copy, and counts as its whole capacity
    /// against the stream's high water. A batch much smaller than its buffer (a trickle, such
    /// as an event stream) is copied out instead and the buffer kept for the next one: a
    /// consumer that keeps many small chunks must not keep a large buffer for each. The next
    /// buffer is sized from this batch (twice its size, from 16 KiB up to a quarter of the high
    /// water, at most 256 KiB), so that batches fill their buffers and are rarely copied (a pass
    /// over an HTTP/2 connection brings each of its streams a frame or two).
    func publishStreamBatch() {
        guard let stream, buffer.count > 0 else { return }
        let count = buffer.count
        let largest = min(max(stream.highWater / 4, 16 << 10), 256 << 10)
        streamBatchCapacity = min(
            max(ResponseBufferPool.pooledCapacity(for: count * 2) ?? largest, min(16 << 10, largest)),
            largest
        )
        if count * 4 < buffer.capacity {
            streamUnread = stream.publish(buffer.copyData(), weight: count)
        } else {
            let capacity = buffer.capacity
            streamUnread = stream.publish(buffer.takeData(), weight: capacity)
        }
    }

    /// The loop's pass over the network ended: the batch goes to the consumer now, unless the
    /// transfer is still mid-flow. Returns `true` when the batch waits for the next pass.
    ///
    /// Mid-flow means that this pass brought a backlog — 64 KiB or more — and the batch has
    /// room for as much again: the loop then passes once more at once, without waiting (see
    /// ``CurlMultiLoop``), and the batch goes out with the first pass that brings less — the
    /// socket ran dry, as after each event of an event stream — or when it is full. So the
    /// consumer is woken once per burst, not once per read, and a batch is held back by one
    /// pass at most once the bytes slow down. (A pass that brings a little, as when the loop is
    /// faster than the server, publishes at once: holding it would cost a pass for nothing.)
    func passEnded() -> Bool {
        let received = streamBytesThisPass
        streamBytesThisPass = 0
        if handle != nil, received >= 64 << 10, buffer.count + received <= buffer.capacity {
            return true
        }
        isStreamBatchScheduled = false
        publishStreamBatch()
        return false
    }

    /// Publishes what is batched, then ends the stream with the trailer fields.
    func finishStream() {
        publishStreamBatch()
        buffer.free()  // the batch's memory goes back to the pool
        stream?.finish(trailers: running.head.trailerFields)
    }

    /// Hands the head and a body stream to the caller.
    func openStream() {
        guard case .streamed(let bufferBytes) = options.responseBody, continuation != nil else { return }
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
        let responseHead =
            running.head.responseHead
            ?? HTTPResponse(status: .standard(code: running.head.statusCode), headerFields: running.head.fields)
        hand(Response(head: responseHead, body: Response.Body(stream: .init(stream)), metrics: metrics()))
    }
}
