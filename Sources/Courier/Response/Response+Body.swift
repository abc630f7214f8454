public import Foundation
public import HTTPTypes

extension Response {
    /// The body of a ``Response``: bytes in memory, or chunks arriving from the network.
    ///
    /// Iterating a buffered body yields its bytes as one chunk. A streamed body can be iterated
    /// once; while the consumer is behind, the transfer pauses instead of buffering without
    /// bound. Dropping a streamed body before its end cancels the transfer.
    public struct Body: AsyncSequence, Sendable {
        /// A chunk of body bytes.
        public typealias Element = Data

        enum Storage: Sendable {
            /// The bytes, and the trailer fields when there were any.
            case buffered(Data, trailers: HTTPFields?)
            case streamed(ResponseBodyStream.Consumer)
        }

        let storage: Storage

        /// A buffered body holding `data`.
        public init(_ data: Data = Data()) {
            storage = .buffered(data, trailers: nil)
        }

        /// A buffered body holding `data` that ended with `trailerFields`.
        ///
        /// - Parameters:
        ///   - data: The bytes.
        ///   - trailerFields: The trailer section that followed them.
        public init(_ data: Data, trailerFields: HTTPFields) {
            storage = .buffered(data, trailers: trailerFields.isEmpty ? nil : trailerFields)
        }

        init(stream: ResponseBodyStream.Consumer) {
            storage = .streamed(stream)
        }

        /// The trailer section: fields the server sent after the body, kept apart from the
        /// head's fields. Empty when there were none; for a streamed body, there once the transfer
        /// has ended — always once the body has been read to its end.
        public var trailerFields: HTTPFields {
            switch storage {
            case .buffered(_, let trailers): trailers ?? HTTPFields()
            case .streamed(let consumer): consumer.stream.trailerFields ?? HTTPFields()
            }
        }

        /// The bytes of a buffered body, or `nil` for a streamed one.
        public var bufferedData: Data? {
            if case .buffered(let data, _) = storage { return data }
            return nil
        }

        /// Whether the body arrives in chunks from the network.
        public var isStreamed: Bool { bufferedData == nil }

        /// Collects the whole body.
        ///
        /// - Parameter maximumBytes: The most bytes to accept.
        /// - Throws: ``CourierError/Kind/responseTooLarge`` when the body is longer, or the
        ///   transfer's error.
        public func collect(upTo maximumBytes: Int) async throws -> Data {
            switch storage {
            case .buffered(let data, _):
                guard data.count <= maximumBytes else { throw Self.tooLarge(maximumBytes) }
                return data
            case .streamed(let consumer):
                var result = Data()
                while let chunk = try await consumer.next() {
                    guard result.count + chunk.count <= maximumBytes else {
                        consumer.cancel()
                        throw Self.tooLarge(maximumBytes)
                    }
                    result.append(chunk)
                }
                return result
            }
        }

        private static func tooLarge(_ limit: Int) -> CourierError {
            CourierError(kind: .responseTooLarge, message: "the response body exceeds \(limit) bytes")
        }

        /// Stops a streamed body's transfer, if it is still running; a waiting iteration throws
        /// `CancellationError`. Does nothing to a buffered body.
        func cancel() {
            if case .streamed(let consumer) = storage { consumer.cancel() }
        }

        /// Creates the iterator.
        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(storage: storage)
        }

        /// Iterates the chunks of a body.
        public struct AsyncIterator: AsyncIteratorProtocol {
            private var storage: Storage?

            init(storage: Storage) {
                self.storage = storage
            }

            /// The next chunk, or `nil` at the end.
            public mutating func next() async throws -> Data? {
                switch storage {
                case .none:
                    return nil
                case .buffered(let data, _):
                    storage = nil
                    return data.isEmpty ? nil : data
                case .streamed(let consumer):
                    return try await consumer.next()
                }
            }
        }
    }
}

@available(*, unavailable)
extension Response.Body.AsyncIterator: Sendable {}
