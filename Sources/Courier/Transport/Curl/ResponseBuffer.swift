import Foundation

/// A growable byte buffer that hands its memory to `Data` without copying.
///
/// Pre-sizing from `Content-Length` avoids the copies and page faults of a growing array.
struct ResponseBuffer {
    private var base: UnsafeMutableRawPointer?
    private(set) var count = 0
    private(set) var capacity = 0

    mutating func reserve(_ minimumCapacity: Int) {
        guard minimumCapacity > capacity else { return }
        if base == nil, minimumCapacity >= ResponseBufferPool.smallestPooled,
            let pooled = ResponseBufferPool.pooledCapacity(for: minimumCapacity)
        {
            guard let buffer = ResponseBufferPool.shared.take(capacity: pooled) ?? malloc(pooled) else {
                preconditionFailure("out of memory allocating a response buffer of \(pooled) bytes")
            }
            base = buffer
            capacity = pooled
            return
        }
        guard let grown = realloc(base, minimumCapacity) else {
            preconditionFailure("out of memory growing a response buffer to \(minimumCapacity) bytes")
        }
        base = grown
        capacity = minimumCapacity
    }

    mutating func append(_ bytes: UnsafeRawBufferPointer) {
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return }
        if count + bytes.count > capacity {
            reserve(Swift.max(count + bytes.count, capacity * 2, 16_384))
        }
        (base! + count).copyMemory(from: source, byteCount: bytes.count)
        count += bytes.count
    }

    /// Moves the bytes into a `Data` that frees them; the buffer is empty afterwards.
    mutating func takeData() -> Data {
        defer {
            base = nil
            count = 0
            capacity = 0
        }
        guard let base, count > 0 else {
            Foundation.free(self.base)
            return Data()
        }
        if ResponseBufferPool.pooledCapacity(for: capacity) == capacity {
            let capacity = capacity
            return Data(
                bytesNoCopy: base,
                count: count,
                deallocator: .custom { pointer, _ in
                    ResponseBufferPool.shared.give(pointer, capacity: capacity)
                }
            )
        }
        return Data(bytesNoCopy: base, count: count, deallocator: .free)
    }

    /// Copies the bytes into a `Data` of their size and empties the buffer, which keeps its
    /// memory for the next bytes.
    mutating func copyData() -> Data {
        guard let base, count > 0 else { return Data() }
        defer { count = 0 }
        return Data(bytes: base, count: count)
    }

    /// Lets go of the memory: back to the pool when it came from there, freed otherwise.
    mutating func free() {
        if let base, ResponseBufferPool.pooledCapacity(for: capacity) == capacity {
            ResponseBufferPool.shared.give(base, capacity: capacity)
        } else {
            Foundation.free(base)
        }
        base = nil
        count = 0
        capacity = 0
    }
}
