import Foundation
import HTTPTypes
import Synchronization

/// The hand-over of streamed response chunks from a transport's thread to one consumer.
///
/// The producer batches what arrives and publishes it with ``publish(_:)``: once per pass of
/// its loop over the network, so a consumer is woken once per batch, not once per read, and
/// never waits for bytes that have arrived. When `highWater` bytes or more wait unread, the
/// producer asks ``pauseIfFull()`` and pauses; when the consumer has drained the buffer to half
/// of `highWater`, ``onDrained`` asks the producer to continue.
///
/// A consumer that finds chunks waiting takes them without suspending: only an empty buffer
/// makes it wait.
final class ResponseBodyStream: Sendable {
    private struct State {
        /// Published chunks, each with the memory it holds (its weight).
        var chunks: [(data: Data, weight: Int)] = []
        var head = 0
        var buffered = 0
        var producerPaused = false
        var finished = false
        var failure: (any Error)?
        var trailers: HTTPFields?
        var waiter: CheckedContinuation<Data?, any Error>?

        /// Takes the oldest chunk and lets go of it: a consumer that never catches up with the
        /// producer (the buffer refills before it is empty) must not keep the chunks it took.
        mutating func takeChunk() -> Data {
            let (chunk, weight) = chunks[head]
            chunks[head] = (Data(), 0)
            head += 1
            buffered -= weight
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 64, head * 2 >= chunks.count {
                // Slots of taken chunks at the front: drop them, moving at most as many as
                // were taken, so each chunk is moved a bounded number of times.
                chunks.removeFirst(head)
                head = 0
            }
            return chunk
        }
    }

    /// What the consumer does after looking at the state.
    private enum Step {
        case chunk(Data, drained: Bool)
        case end
        case fail(any Error)
        case wait, waitAfterDraining
    }

    private let state = LockedBox(State())
    /// The unread bytes at which the producer pauses.
    let highWater: Int
    private let onDrained: @Sendable () -> Void
    private let onCancel: @Sendable () -> Void

    init(highWater: Int, onDrained: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void) {
        self.highWater = max(1, highWater)
        self.onDrained = onDrained
        self.onCancel = onCancel
    }

    // MARK: The producer (one thread)

    /// Publishes a batch of body bytes: a waiting consumer gets it at once. `weight` is the
    /// memory the chunk holds (its buffer's capacity, at least its count), which counts against
    /// the high water until the consumer takes it. Returns the weight that waits unread
    /// afterwards. Once the stream has ended (its consumer cancelled it), the bytes are dropped.
    @discardableResult
    func publish(_ chunk: Data, weight: Int) -> Int {
        let (waiter, unread) = state.withLock { state -> (CheckedContinuation<Data?, any Error>?, Int) in
            if state.finished || chunk.isEmpty { return (nil, state.buffered) }
            if let waiter = state.waiter {
                state.waiter = nil
                return (waiter, state.buffered)
            }
            state.chunks.append((chunk, max(weight, chunk.count)))
            state.buffered += max(weight, chunk.count)
            return (nil, state.buffered)
        }
        waiter?.resume(returning: chunk)
        return unread
    }

    /// Whether the producer must pause: `highWater` bytes or more wait unread. When it returns
    /// `true`, ``onDrained`` runs once the consumer has drained the buffer to half of it.
    func pauseIfFull() -> Bool {
        state.withLock { state in
            guard !state.finished, state.buffered >= highWater else { return false }
            state.producerPaused = true
            return true
        }
    }

    /// The trailer fields the body ended with, once it ended with some.
    var trailerFields: HTTPFields? {
        state.withLock { $0.trailers }
    }

    /// Ends the stream, with an error when the transfer failed, or with the trailer fields
    /// that followed the body. Chunks published before are still read first.
    func finish(throwing error: (any Error)? = nil, trailers: HTTPFields? = nil) {
        let waiter = state.withLock { state -> CheckedContinuation<Data?, any Error>? in
            guard !state.finished else { return nil }
            state.finished = true
            state.failure = error
            state.trailers = trailers
            defer { state.waiter = nil }
            return state.waiter
        }
        if let error { waiter?.resume(throwing: error) } else { waiter?.resume(returning: nil) }
    }

    // MARK: The consumer

    /// The next chunk, or `nil` at the end. Returns without suspending when a chunk waits.
    func next() async throws -> Data? {
        if !Task.isCancelled, let step = state.withLock({ takeAvailable(&$0) }) {
            switch step {
            case .chunk(let chunk, let drained):
                if drained { onDrained() }
                return chunk
            case .end: return nil
            case .fail(let error): throw error
            case .wait, .waitAfterDraining: break  // never returned by takeAvailable
            }
        }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let step: Step = state.withLock { state in
                    if let step = takeAvailable(&state) { return step }
                    state.waiter = continuation
                    if state.producerPaused {
                        state.producerPaused = false
                        return .waitAfterDraining
                    }
                    return .wait
                }
                switch step {
                case .chunk(let chunk, let drained):
                    if drained { onDrained() }
                    continuation.resume(returning: chunk)
                case .end: continuation.resume(returning: nil)
                case .fail(let error): continuation.resume(throwing: error)
                case .wait: break
                case .waitAfterDraining: onDrained()
                }
            }
        } onCancel: {
            self.cancelFromConsumer()
        }
    }

    /// A waiting chunk, or the end; `nil` when the consumer must wait.
    private func takeAvailable(_ state: inout State) -> Step? {
        if state.head < state.chunks.count {
            let chunk = state.takeChunk()
            var drained = false
            if state.producerPaused && state.buffered <= highWater / 2 {
                state.producerPaused = false
                drained = true
            }
            return .chunk(chunk, drained: drained)
        }
        if state.finished {
            if let failure = state.failure { return .fail(failure) }
            return .end
        }
        return nil
    }

    func cancelFromConsumer() {
        let (wasOpen, waiter) = state.withLock { state -> (Bool, CheckedContinuation<Data?, any Error>?) in
            guard !state.finished else { return (false, nil) }
            state.finished = true
            state.failure = CancellationError()
            state.chunks.removeAll()
            state.head = 0
            state.buffered = 0
            defer { state.waiter = nil }
            return (true, state.waiter)
        }
        waiter?.resume(throwing: CancellationError())
        if wasOpen { onCancel() }
    }

    /// The consumer's handle. When the last copy of the response body is gone before the
    /// end of the stream, the transfer is cancelled.
    final class Consumer: Sendable {
        let stream: ResponseBodyStream

        init(_ stream: ResponseBodyStream) {
            self.stream = stream
        }

        func next() async throws -> Data? { try await stream.next() }

        func cancel() { stream.cancelFromConsumer() }

        deinit { stream.cancelFromConsumer() }
    }
}
