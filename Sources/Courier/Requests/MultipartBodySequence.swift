import Foundation

/// The chunks of a multipart body with file parts: the in-memory runs as they are, each
/// file read in chunks of ``chunkSize`` bytes while the transport asks for more.
///
/// A fresh sequence is made for every attempt, so the body can be resent.
struct MultipartBodySequence: AsyncSequence, Sendable {
    typealias Element = Data

    /// How many bytes of a file are read at a time.
    static let chunkSize = 256 << 10

    let segments: [MultipartBody.Segment]

    func makeAsyncIterator() -> Iterator {
        Iterator(segments: segments)
    }

    /// Walks the segments, holding at most one open file.
    struct Iterator: AsyncIteratorProtocol {
        private let segments: [MultipartBody.Segment]
        private var index = 0
        private var file: FileHandle?
        private var remaining: Int64 = 0

        init(segments: [MultipartBody.Segment]) {
            self.segments = segments
        }

        mutating func next() async throws -> Data? {
            while index < segments.count {
                switch segments[index] {
                case .data(let data):
                    index += 1
                    return data
                case .file(let path, let length):
                    if file == nil {
                        guard let handle = FileHandle(forReadingAtPath: path) else {
                            throw CourierError(
                                kind: .unreadableFile,
                                message: "cannot open \(ErrorText.file(path)) for reading"
                            )
                        }
                        file = handle
                        remaining = length
                    }
                    guard remaining > 0, let handle = file else {
                        try? file?.close()
                        file = nil
                        index += 1
                        continue
                    }
                    let chunk = try handle.read(
                        upToCount: Int(Swift.min(Int64(MultipartBodySequence.chunkSize), remaining))
                    )
                    guard let chunk, !chunk.isEmpty else {
                        throw CourierError(
                            kind: .unreadableFile,
                            message: "\(ErrorText.file(path)) became shorter while it was uploaded"
                        )
                    }
                    remaining -= Int64(chunk.count)
                    return chunk
                }
            }
            return nil
        }
    }
}

@available(*, unavailable)
extension MultipartBodySequence.Iterator: Sendable {}
