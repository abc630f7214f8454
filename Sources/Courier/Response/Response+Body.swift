public import Foundation

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
            case buffered(Data)
            case streamed(ResponseBodyStream.Consumer)
        }

        let storage: Storage

        /// A buffered body holding `data`.
        public init(_ data: Data = Data()) {
            storage = .buffered(data)
        }

        init(stream: ResponseBodyStream.Consumer) {
            storage = .streamed(stream)
        }

        /// The bytes of a buffered body, or `nil` for a streamed one.
        public var bufferedData: Data? {
            if case .buffered(let data) = storage { return data }
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
            case .buffered(let data):
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
                case .buffered(let data):
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
