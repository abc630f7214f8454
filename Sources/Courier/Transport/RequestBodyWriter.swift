import Foundation
import HTTPTypes
import Synchronization

/// Receives the chunks of a streamed ``RequestBody`` and applies back-pressure to its producer.
///
/// The producer awaits ``write(_:)``; the consumer (a transport's upload callback) takes bytes
/// with ``read(into:)``. When more than `limit` bytes wait, writers suspend until the
/// consumer drains them.
final class RequestBodyWriter: Sendable {
    private struct State {
        var chunks: [Data] = []
        var offset = 0
        var buffered = 0
        var finished = false
        var failure: (any Error)?
        var waitingWriter: CheckedContinuation<Void, any Error>?
        var collectOnly = false
        var readerWaiting = false
        var trailers: HTTPFields?
    }

    enum ReadResult {
        case bytes(Int)
        case wouldBlock
        case end
        case failed(any Error)
    }

    private let state = LockedBox(State())
    private let limit: Int
    private let onDataAvailable: @Sendable () -> Void

    init(limit: Int, onDataAvailable: @escaping @Sendable () -> Void) {
        self.limit = limit
        self.onDataAvailable = onDataAvailable
    }

    static func collecting(limit: Int) -> RequestBodyWriter {
        let writer = RequestBodyWriter(limit: limit, onDataAvailable: {})
        writer.state.withLock { $0.collectOnly = true }
        return writer
    }

    /// Appends a chunk, suspending while the consumer is behind.
    func write(_ chunk: Data) async throws {
        enum Outcome {
            case done, wait
            case fail(any Error)
        }
        let (outcome, notify): (Outcome, Bool) = state.withLock { state in
            if let failure = state.failure { return (.fail(failure), false) }
            if state.collectOnly && state.buffered + chunk.count > limit {
                return (.fail(CourierError.invalidBody("body exceeds \(limit) bytes")), false)
            }
            state.chunks.append(chunk)
            state.buffered += chunk.count
            let notify = state.readerWaiting
            state.readerWaiting = false
            return (state.collectOnly || state.buffered < limit ? .done : .wait, notify)
        }
        if notify { onDataAvailable() }
        switch outcome {
        case .fail(let error): throw error
        case .done: break
        case .wait:
            try await withCheckedThrowingContinuation { continuation in
                let resumeNow: Result<Void, any Error>? = state.withLock { state in
                    if let failure = state.failure { return .failure(failure) }
                    if state.buffered < limit { return .success(()) }
                    state.waitingWriter = continuation
                    return nil
                }
                if let resumeNow { continuation.resume(with: resumeNow) }
            }
        }
    }

    /// Sets the trailer fields the body ends with; called before ``finish(throwing:)``.
    func setTrailers(_ trailers: HTTPFields) {
        state.withLock { $0.trailers = trailers }
    }

    /// The trailer fields the body ends with, once set.
    var trailers: HTTPFields? {
        state.withLock { $0.trailers }
    }

    /// Marks the end of the body, or its failure.
    func finish(throwing error: (any Error)? = nil) {
        let (waiter, notify) = state.withLock { state -> (CheckedContinuation<Void, any Error>?, Bool) in
            state.finished = true
            if state.failure == nil { state.failure = error }
            let notify = state.readerWaiting
            state.readerWaiting = false
            defer { state.waitingWriter = nil }
            return (state.waitingWriter, notify)
        }
        waiter?.resume()
        if notify { onDataAvailable() }
    }

    /// Stops the producer: its next or pending `write` throws `error`.
    func cancel(_ error: any Error) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, any Error>? in
            state.failure = state.failure ?? error
            defer { state.waitingWriter = nil }
            return state.waitingWriter
        }
        waiter?.resume(throwing: error)
    }

    /// Copies up to `buffer.count` waiting bytes into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadResult {
        let (result, waiter) = state.withLock { state -> (ReadResult, CheckedContinuation<Void, any Error>?) in
            if let failure = state.failure { return (.failed(failure), nil) }
            var copied = 0
            while copied < buffer.count, !state.chunks.isEmpty {
                let chunk = state.chunks[0]
                let available = chunk.count - state.offset
                let n = min(available, buffer.count - copied)
                chunk.withUnsafeBytes { source in
                    let start = source.baseAddress!.advanced(by: state.offset)
                    (buffer.baseAddress! + copied).copyMemory(from: start, byteCount: n)
                }
                copied += n
                state.offset += n
                if state.offset == chunk.count {
                    state.chunks.removeFirst()
                    state.offset = 0
                }
            }
            state.buffered -= copied
            var waiter: CheckedContinuation<Void, any Error>?
            if state.buffered < limit {
                waiter = state.waitingWriter
                state.waitingWriter = nil
            }
            if copied > 0 { return (.bytes(copied), waiter) }
            if state.finished { return (.end, waiter) }
            state.readerWaiting = true
            return (.wouldBlock, waiter)
        }
        waiter?.resume()
        return result
    }

    /// Everything written so far, joined (for collecting writers).
    func collected() -> Data {
        state.withLock { state in
            var data = Data(capacity: state.buffered)
            for chunk in state.chunks { data.append(chunk) }
            return data
        }
    }
}
