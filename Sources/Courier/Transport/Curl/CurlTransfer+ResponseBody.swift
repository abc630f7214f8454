internal import CCurlShim
import Foundation
import HTTPTypes

/// The response body's two sinks: a buffer returned with the head, or a stream the caller
/// reads while the transfer goes on (loop thread).
extension CurlTransfer {
    /// Takes body bytes. Returns the count taken; anything else makes curl pause or fail.
    func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        assertConfined()
        switch machine.bodyReceived() {
        case .stream:
            guard let stream else { return 0 }
            if stream.offer(Data(bytes)) {
                receivedBytes += bytes.count
                return bytes.count
            }
            machine.receivePaused()
            return Int(ccurl_writefunc_pause())
        case .buffer:
            if buffer.count + bytes.count > bufferLimit {
                failure = CourierError(
                    kind: .responseTooLarge,
                    message: "the response body exceeds \(bufferLimit) bytes"
                )
                return 0
            }
            let expectedLength = head.expectedLength
            if buffer.capacity == 0, expectedLength > 0, expectedLength <= Int64(bufferLimit) {
                buffer.reserve(Int(expectedLength))
            }
            buffer.append(bytes)
            receivedBytes += bytes.count
            return bytes.count
        case .discard:
            return bytes.count
        case .abort:
            return 0
        }
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
        let responseHead = HTTPResponse(status: .standard(code: head.statusCode), headerFields: head.fields)
        hand(Response(head: responseHead, body: Response.Body(stream: .init(stream)), metrics: metrics()))
    }
}
