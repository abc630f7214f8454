import Foundation

/// Keeps large response buffers for reuse, so that a steady stream of big buffered responses
/// does not pay for fresh pages (page faults, then `munmap`) on every request.
///
/// Only buffers whose capacity is a power of two between 16 KiB and 4 MiB are kept, at most
/// 64 per size (more of the sizes below 2 MiB, up to the whole bound: the batches of streamed
/// bodies are 16–256 KiB) and 80 MiB in all; anything else is freed as usual. (With 8 per size, 64 MiB
/// responses in flight at 1 MiB each still paid for fresh pages: 0.30× the C floor's MiB/s
/// against 0.60× with 64.) The memory stays with the process after a burst, up to that bound. A buffer comes back
/// when the `Data` that owns it is released, on whatever thread that happens.
final class ResponseBufferPool: Sendable {
    static let shared = ResponseBufferPool()

    static let smallestPooled = 16 << 10
    static let largestPooled = 4 << 20
    /// How many buffers of `capacity` bytes are kept at most.
    private static func limit(for capacity: Int) -> Int {
        max(64, totalBytes / capacity)
    }
    private static let totalBytes = 80 << 20

    private struct State {
        var free: [Int: [UnsafeMutableRawPointer]] = [:]
        var bytes = 0
    }

    private let state = LockedBox(State())

    /// The capacity a pooled buffer for `bytes` has, or `nil` when such a buffer is not pooled.
    static func pooledCapacity(for bytes: Int) -> Int? {
        guard bytes <= largestPooled else { return nil }
        var capacity = smallestPooled
        while capacity < bytes { capacity <<= 1 }
        return capacity
    }

    /// A buffer of exactly `capacity` bytes, reused when one is free.
    func take(capacity: Int) -> UnsafeMutableRawPointer? {
        state.withLock { state in
            guard let buffer = state.free[capacity]?.popLast() else { return nil }
            state.bytes -= capacity
            return buffer
        }
    }

    /// Takes back a buffer of `capacity` bytes, or frees it when the pool is full.
    func give(_ buffer: UnsafeMutableRawPointer, capacity: Int) {
        let kept = state.withLock { state -> Bool in
            guard state.bytes + capacity <= Self.totalBytes,
                state.free[capacity, default: []].count < Self.limit(for: capacity)
            else {
                return false
            }
            state.free[capacity, default: []].append(buffer)
            state.bytes += capacity
            return true
        }
        if !kept { free(buffer) }
    }
}
