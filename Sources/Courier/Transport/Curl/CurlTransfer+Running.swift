/// What a transfer keeps only while it runs on an easy handle (loop thread).
///
/// When thousands of requests wait for a few connections, nearly every transfer in flight is
/// waiting for a handle. So the parts that only a running transfer uses — the response head as
/// it arrives, progress, the request body's source, the stall watch, a callback's failure —
/// live in the handle (``CurlEasyHandle/running``), fresh for each transfer, and a waiting
/// transfer holds none of them. A transfer without a handle reads them as a transfer that has
/// not begun, and a change it makes to them is dropped: none is made then.
extension CurlTransfer {
    /// The parts of a running transfer; one per easy handle, made fresh for each transfer.
    final class Running {
        /// The response head as it arrives.
        var head = ResponseHeadParser()
        /// Progress reported so far.
        var reportedProgress = TransferProgress()
        /// Why a callback stopped the transfer, if one did.
        var failure: CourierError?
        /// The request body's source.
        var upload: UploadSource?
        /// Whether the whole request body was handed to libcurl (or there is none).
        var uploadEnded = true
        /// Request body bytes handed to libcurl in this attempt.
        var uploadedBytes: Int64 = 0
        /// The chunked framing of a response body that ends while the request body still goes:
        /// libcurl hands over the raw bytes and this reads them (see ``ChunkedBodyDecoder``).
        var chunkedBody: ChunkedBodyReader?
        /// Response body bytes received (after decoding).
        var receivedBytes = 0
        /// Whether the transfer is watched for stalls (CurlTransfer+Stall.swift).
        var stallWatched = false
        /// When a byte last moved (``StallClock``).
        var lastMoved: UInt64 = 0
        /// Whether the deadline is nearer than the connect timeout, so that a timeout while
        /// connecting is the deadline's.
        var deadlineComesFirst = false

        /// Makes the parts fresh for the next transfer.
        func reset() {
            head = ResponseHeadParser()
            reportedProgress = TransferProgress()
            failure = nil
            upload = nil
            uploadEnded = true
            uploadedBytes = 0
            chunkedBody = nil
            receivedBytes = 0
            stallWatched = false
            lastMoved = 0
            deadlineComesFirst = false
        }
    }

    /// The running parts of this transfer: its handle's. Without a handle, the loop's spare
    /// parts, made fresh: they read as a transfer that has not begun, and a change is dropped.
    var running: Running {
        if let handle { return handle.running }
        return loop.freshDetachedParts()
    }
}
