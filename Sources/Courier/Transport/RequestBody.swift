public import Foundation
public import HTTPTypes

/// The body of a request: bytes in memory, a file streamed from disk, or an async sequence.
///
/// Bodies from memory and from files can be sent again (``isReplayable``), so a middleware
/// may restart such a request; a body from an async sequence can be sent once.
public struct RequestBody: Sendable {
    enum Storage: Sendable {
        case data(Data)
        case file(path: String, length: Int64)
        /// Chunks a pump writes; `trailers` when the body ends with trailer fields (which the
        /// pump hands to the writer after the last chunk).
        case stream(
            length: Int64?,
            replayable: Bool,
            trailers: Bool,
            pump: @Sendable (RequestBodyWriter) async throws -> Void
        )
    }

    let storage: Storage

    /// A body of bytes held in memory.
    public static func data(_ data: Data) -> RequestBody {
        RequestBody(storage: .data(data))
    }

    /// A body of the UTF-8 bytes of `string`.
    public static func string(_ string: String) -> RequestBody {
        RequestBody(storage: .data(Data(string.utf8)))
    }

    /// A body streamed from the file at `path` without loading it into memory.
    ///
    /// - Throws: ``CourierError/Kind/invalidBody`` when the file does not exist or is not a regular file.
    public static func file(atPath path: String) throws -> RequestBody {
        let attributes: [FileAttributeKey: Any]
        do {
            attributes = try FileManager.default.attributesOfItem(atPath: path)
        } catch {
            throw CourierError.invalidBody("cannot read file at \(ErrorText.file(path)): \(error.localizedDescription)")
        }
        guard attributes[.type] as? FileAttributeType == .typeRegular,
            let size = attributes[.size] as? NSNumber
        else {
            throw CourierError.invalidBody("\(ErrorText.file(path)) is not a regular file")
        }
        return RequestBody(storage: .file(path: path, length: size.int64Value))
    }

    /// A body produced by an async sequence of byte chunks, sent as it is produced.
    ///
    /// - Parameters:
    ///   - sequence: The chunks. It is iterated once, at the first attempt.
    ///   - length: The total length when known; otherwise HTTP/1.1 uses chunked encoding.
    public static func stream<Chunks: AsyncSequence & Sendable>(
        _ sequence: Chunks,
        length: Int64? = nil
    ) -> RequestBody where Chunks.Element == Data {
        RequestBody(
            storage: .stream(length: length, replayable: false, trailers: false) { writer in
                for try await chunk in sequence where !chunk.isEmpty {
                    try await writer.write(chunk)
                }
            }
        )
    }

    /// A body produced by an async sequence of byte chunks that ends with trailer fields.
    ///
    /// Trailer fields follow the body: a checksum or a signature computed while the chunks went
    /// out, say. They travel in HTTP/1.1's chunked encoding, so a request with this body uses
    /// HTTP/1.1 even where the server offers HTTP/2, and the body is sent chunked whatever
    /// its length. Fields that framing, routing or authentication depend on
    /// (`Content-Length`, `Transfer-Encoding`, `Host`, `Authorization`, `Trailer`, and the
    /// like) cannot be trailers: the request then fails with
    /// ``CourierError/Kind/requestBodyFailed`` and the server sees an unfinished body.
    ///
    /// ```swift
    /// let chunks = AsyncStream<Data> { continuation in
    ///     continuation.yield(Data("Hello World".utf8))
    ///     continuation.finish()
    /// }
    /// let body = RequestBody.stream(chunks) {
    ///     [HTTPField.Name("X-Checksum")!: "abc123"]
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - sequence: The chunks. It is iterated once, at the first attempt.
    ///   - trailerFields: Called once after the last chunk; returns the trailer fields.
    public static func stream<Chunks: AsyncSequence & Sendable>(
        _ sequence: Chunks,
        trailerFields: @escaping @Sendable () async throws -> HTTPFields
    ) -> RequestBody where Chunks.Element == Data {
        RequestBody(
            storage: .stream(length: nil, replayable: false, trailers: true) { writer in
                for try await chunk in sequence where !chunk.isEmpty {
                    try await writer.write(chunk)
                }
                writer.setTrailers(try await trailerFields())
            }
        )
    }

    /// A body produced anew for every attempt by a sequence that `makeChunks` creates.
    ///
    /// Unlike ``stream(_:length:)``, such a body is replayable: a middleware may resend it.
    ///
    /// - Parameters:
    ///   - length: The total length when known; otherwise HTTP/1.1 uses chunked encoding.
    ///   - makeChunks: Creates the sequence of chunks for one attempt.
    public static func generated<Chunks: AsyncSequence & Sendable>(
        length: Int64?,
        _ makeChunks: @escaping @Sendable () -> Chunks
    ) -> RequestBody where Chunks.Element == Data {
        RequestBody(
            storage: .stream(length: length, replayable: true, trailers: false) { writer in
                for try await chunk in makeChunks() where !chunk.isEmpty {
                    try await writer.write(chunk)
                }
            }
        )
    }

    /// The length in bytes, when it is known before sending.
    public var length: Int64? {
        switch storage {
        case .data(let data): Int64(data.count)
        case .file(_, let length): length
        case .stream(let length, _, _, _): length
        }
    }

    /// Whether the body can be sent more than once (memory and file bodies can).
    public var isReplayable: Bool {
        if case .stream(_, let replayable, _, _) = storage { return replayable }
        return true
    }

    /// Whether the body ends with trailer fields.
    var hasTrailers: Bool {
        if case .stream(_, _, let trailers, _) = storage { return trailers }
        return false
    }

    /// The length a transport announces: none for a body with trailers, which goes chunked.
    var framedLength: Int64? {
        hasTrailers ? nil : length
    }

    /// Reads the whole body into memory.
    ///
    /// The bytes only: trailer fields a streamed body ends with are not among them.
    ///
    /// - Parameter maximumBytes: The most bytes to accept.
    /// - Throws: ``CourierError/Kind/invalidBody`` when the body is longer than `maximumBytes`
    ///   or its file cannot be read.
    public func collect(upTo maximumBytes: Int) async throws -> Data {
        switch storage {
        case .data(let data):
            guard data.count <= maximumBytes else {
                throw CourierError.invalidBody("body exceeds \(maximumBytes) bytes")
            }
            return data
        case .file(let path, let length):
            guard length <= maximumBytes else { throw CourierError.invalidBody("body exceeds \(maximumBytes) bytes") }
            guard let data = FileManager.default.contents(atPath: path) else {
                throw CourierError.invalidBody("cannot read file at \(ErrorText.file(path))")
            }
            return data
        case .stream(_, _, _, let pump):
            let collector = RequestBodyWriter.collecting(limit: maximumBytes)
            try await pump(collector)
            return collector.collected()
        }
    }
}
