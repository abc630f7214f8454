import Courier
import Foundation
import Testing

@testable import CourierSQLite

/// While another connection holds the write lock — another process writing, or stuck — the
/// store's calls wait on the store's own threads: Swift's cooperative pool stays free, reads
/// go on, a cancelled caller is answered at once with nothing written, and a lock held past
/// the busy timeout is a typed error.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct SQLiteStoreBlockingTests {
    let fixtures: StoreFixtures
    let alice = TokenStoreKey(clientID: "courier-user", level: .user, user: "alice")

    init() throws { fixtures = try StoreFixtures() }

    /// Another connection to the file in a write transaction: the lock every writer waits for.
    final class HeldLock: @unchecked Sendable {
        // `@unchecked`: the connection is used by the test's task alone, and by the watchdog
        // only after the test has stopped using it (the lock's state says which).
        private let database: RawDatabase
        private let state = NSLock()
        private var released = false

        /// Opens `path` and takes its write lock.
        init(_ path: String) throws {
            database = try RawDatabase(path)
            try database.execute("BEGIN IMMEDIATE")
        }

        /// Ends the transaction, once.
        ///
        /// - Returns: Whether this call released it.
        @discardableResult
        func release() -> Bool {
            state.lock()
            defer { state.unlock() }
            guard !released else { return false }
            released = true
            try? database.execute("ROLLBACK")
            return true
        }
    }

    /// Waits, yielding, until the store's writer waits for a lock — at most 10 seconds.
    func untilTheWriterWaitsForALock(_ store: SQLiteTokenStore) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !store.writer.isWaitingForALock {
            try #require(ContinuousClock.now < deadline, "the writer never waited for the lock")
            await Task.yield()
        }
    }

    @Test func theCooperativePoolStaysFreeWhileManyCallsWaitForALock() async throws {
        let store = fixtures.store(configuration: .init(busyTimeout: .seconds(30)))
        try await store.setToken(StoreFixtures.token("before"), for: alice)
        let lock = try HeldLock(fixtures.path)
        // Never longer than 20 s, whatever happens to the test: on a thread of its own, since
        // a blocked pool could not run a task.
        let watchdog = Thread {
            Thread.sleep(forTimeInterval: 20)
            lock.release()
        }
        watchdog.start()

        let finished = Counter()
        let writers = Task {
            try await withThrowingTaskGroup(of: Void.self) { group in
                // Far more callers than the pool has threads (one per core).
                for index in 0..<64 {
                    group.addTask {
                        let key = TokenStoreKey(clientID: "courier-user", level: .user, user: "user-\(index)")
                        try await store.setToken(StoreFixtures.token("\(index)"), for: key)
                        finished.increment()
                    }
                }
                try await group.waitForAll()
            }
        }
        try await untilTheWriterWaitsForALock(store)

        // Other async work runs to its end meanwhile, on the pool: many tasks that each
        // suspend and resume many times …
        let work = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    var total = 0
                    for step in 0..<50 {
                        await Task.yield()
                        total += step
                    }
                    return total
                }
            }
            return await group.reduce(0, +)
        }
        #expect(work == 200 * (0..<50).reduce(0, +))
        // … and the store's reads: readers do not wait for the writer.
        #expect(try await store.token(for: alice) == StoreFixtures.token("before"))
        #expect(finished.value == 0, "no write got through the lock")
        #expect(store.writer.isWaitingForALock)

        #expect(lock.release(), "the test released the lock, not the watchdog")
        try await writers.value
        #expect(finished.value == 64)
        for index in [0, 31, 63] {
            let key = TokenStoreKey(clientID: "courier-user", level: .user, user: "user-\(index)")
            #expect(try await store.token(for: key) == StoreFixtures.token("\(index)"))
        }
    }

    @Test func aCallerCancelledWhileWaitingForALockGetsCancellationErrorAndNothingIsWritten() async throws {
        let store = fixtures.store(configuration: .init(busyTimeout: .seconds(30)))
        try await store.setToken(StoreFixtures.token("before"), for: alice)
        let before = try await store.entry(for: alice)
        let lock = try HeldLock(fixtures.path)
        defer { lock.release() }

        let waiting = Task { [alice] in
            try await store.setToken(StoreFixtures.token("waiting"), for: alice, ifVersion: before.version)
        }
        try await untilTheWriterWaitsForALock(store)
        // A second call queued behind the first.
        let queued = Task { [alice] in try await store.setToken(StoreFixtures.token("queued"), for: alice) }
        queued.cancel()
        await #expect(throws: CancellationError.self) { try await queued.value }
        waiting.cancel()
        // Answered while the lock is still held: the call stopped waiting.
        await #expect(throws: CancellationError.self) { try await waiting.value }
        lock.release()

        #expect(try await store.entry(for: alice) == before)
        // The store goes on: the next write is based on the same version.
        #expect(try await store.setToken(StoreFixtures.token("after"), for: alice, ifVersion: before.version) != nil)
    }

    @Test func aCallerCancelledBeforeItsCallGetsCancellationError() async throws {
        let store = fixtures.store()
        let task = Task { [alice] in
            withUnsafeCurrentTask { $0?.cancel() }
            return try await store.setToken(StoreFixtures.token("never"), for: alice, ifVersion: 0)
        }
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(try await store.entry(for: alice) == TokenStoreEntry(token: nil, version: 0))
    }

    @Test func aLockHeldPastTheBusyTimeoutIsAnIOFailure() async throws {
        let store = fixtures.store(configuration: .init(busyTimeout: .milliseconds(300)))
        try await store.setToken(StoreFixtures.token("before"), for: alice)
        let lock = try HeldLock(fixtures.path)
        defer { lock.release() }
        do {
            try await store.setToken(StoreFixtures.token("late"), for: alice)
            Issue.record("the write went through a held lock")
        } catch let error as CourierError {
            #expect(error.kind == .tokenStoreIOFailure)
            #expect(error.message.contains("busy timeout"), "\(error)")
        }
        do {
            _ = try await store.acquireLease(for: alice, duration: .seconds(10))
            Issue.record("the lease went through a held lock")
        } catch let error as CourierError {
            #expect(error.kind == .tokenStoreIOFailure)
        }
        lock.release()
        #expect(try await store.token(for: alice) == StoreFixtures.token("before"))
    }
}

/// A count that tasks raise.
final class Counter: Sendable {
    private let count = LockedBox(0)
    /// Adds one.
    func increment() { count.withLock { $0 += 1 } }
    /// The count now.
    var value: Int { count.withLock { $0 } }
}
