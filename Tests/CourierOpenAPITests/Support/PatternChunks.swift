#if OpenAPI
import Crypto
import Foundation
import OpenAPIRuntime
import Synchronization

/// An upload body made chunk by chunk as the transport asks for it: `count` chunks of `size`
/// bytes, each stamped with its index. It counts the chunks made; with a gate, the chunks from
/// `gate.index` on are made only once `gate.open` has returned.
struct PatternChunks: AsyncSequence, Sendable {
    typealias Element = HTTPBody.ByteChunk

    let count: Int
    let size: Int
    var gate: (index: Int, open: @Sendable () async -> Void)?
    let made = Counter()

    var totalSize: Int { count * size }

    /// The SHA-256 of the whole body, lower-case hex.
    var expectedDigest: String {
        var hash = SHA256()
        for index in 0..<count { hash.update(data: chunk(index)) }
        return hash.finalize().hex
    }

    func chunk(_ index: Int) -> ArraySlice<UInt8> {
        var bytes = [UInt8](repeating: UInt8(truncatingIfNeeded: index), count: size)
        withUnsafeBytes(of: UInt64(index).bigEndian) { stamp in bytes.replaceSubrange(0..<8, with: stamp) }
        return bytes[...]
    }

    func makeAsyncIterator() -> Iterator { Iterator(chunks: self) }

    struct Iterator: AsyncIteratorProtocol {
        let chunks: PatternChunks
        var next = 0

        mutating func next() async throws -> ArraySlice<UInt8>? {
            guard next < chunks.count else { return nil }
            if let gate = chunks.gate, gate.index == next { await gate.open() }
            defer { next += 1 }
            _ = chunks.made.add(1)
            return chunks.chunk(next)
        }
    }
}

/// A shared count.
final class Counter: Sendable {
    private let count = Mutex(0)

    var value: Int { count.withLock { $0 } }

    /// Adds `delta` and returns the new value.
    func add(_ delta: Int) -> Int {
        count.withLock {
            $0 += delta
            return $0
        }
    }
}

extension SHA256.Digest {
    /// The digest as lower-case hex.
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
#endif
