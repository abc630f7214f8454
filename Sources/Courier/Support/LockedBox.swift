import Foundation

/// A value guarded by a `pthread_mutex_t`.
///
/// Courier uses this instead of `Synchronization.Mutex` because ThreadSanitizer understands
/// pthread mutexes: with `Mutex` on Linux it reports races between two critical sections of
/// the same lock, which would hide real races in the noise. Never hold it across an `await`.
///
/// `@unchecked Sendable`: every access to `value` happens with the mutex held.
package final class LockedBox<Value>: @unchecked Sendable {
    private var value: Value
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>

    /// Creates a box holding `value`.
    package init(_ value: Value) {
        self.value = value
        mutex = UnsafeMutablePointer.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed: \(status)")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deallocate()
    }

    /// Runs `body` with the value, the mutex held.
    @inline(__always)
    package func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&value)
    }
}
