import Courier
import Foundation
import Testing

@testable import CourierSQLite

/// Leases in the store's table, between store instances on one file (each with connections of
/// its own, as separate processes have).
@Suite(.timeLimit(.minutes(1)))
struct SQLiteStoreLeaseTests {
    let fixtures: StoreFixtures
    let key = TokenStoreKey(clientID: "courier-user", level: .user, user: "alice")

    init() throws { fixtures = try StoreFixtures() }

    @Test func ofManyConcurrentAcquirersOneWins() async throws {
        let stores = (0..<4).map { _ in fixtures.store() }
        let leases = try await withThrowingTaskGroup(of: TokenStoreLease?.self) { group in
            for index in 0..<24 {
                let store = stores[index % stores.count]
                group.addTask { [key] in try await store.acquireLease(for: key, duration: .seconds(30)) }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(leases.compactMap { $0 }.count == 1)
    }

    @Test func aLeaseExcludesOthersUntilItsHolderReleasesIt() async throws {
        let holder = fixtures.store()
        let other = fixtures.store()
        let lease = try #require(try await holder.acquireLease(for: key, duration: .seconds(30)))
        #expect(lease.key == key)
        #expect(lease.expiresAt > Date().addingTimeInterval(20))
        #expect(try await other.acquireLease(for: key, duration: .seconds(30)) == nil)
        #expect(try await holder.acquireLease(for: key, duration: .seconds(30)) == nil)
        // Other keys have leases of their own.
        let device = TokenStoreKey(clientID: "courier-device", level: .device)
        #expect(try await other.acquireLease(for: device, duration: .seconds(30)) != nil)
        // A release by anyone but the holder changes nothing.
        var forged = lease
        forged.holder = "someone else"
        try await other.releaseLease(forged)
        #expect(try await other.acquireLease(for: key, duration: .seconds(30)) == nil)
        try await holder.releaseLease(lease)
        let next = try #require(try await other.acquireLease(for: key, duration: .seconds(30)))
        #expect(next.holder != lease.holder)
        // A lease leaves the entry's version alone.
        #expect(try await other.entry(for: key) == TokenStoreEntry(token: nil, version: 0))
        _ = try #require(try await other.setToken(StoreFixtures.token("x"), for: key, ifVersion: 0))
    }

    @Test func aLeaseHeldPastItsExpiryIsTakenOver() async throws {
        let stuck = fixtures.store()
        let other = fixtures.store()
        let lease = try #require(try await stuck.acquireLease(for: key, duration: .milliseconds(100)))
        // Polled, bounded in count and time: the clock decides.
        var taken: TokenStoreLease?
        for _ in 0..<250 where taken == nil {
            taken = try await other.acquireLease(for: key, duration: .seconds(30))
            if taken == nil { try await Task.sleep(for: .milliseconds(20)) }
        }
        let takeover = try #require(taken)
        #expect(Date() >= lease.expiresAt)
        #expect(takeover.holder != lease.holder)
        // The stuck holder's late release leaves the new lease alone.
        try await stuck.releaseLease(lease)
        #expect(try await stuck.acquireLease(for: key, duration: .seconds(30)) == nil)
        try await other.releaseLease(takeover)
        #expect(try await stuck.acquireLease(for: key, duration: .seconds(30)) != nil)
    }

    /// What coordination costs a renewal on this store: a read, a lease taken and released, a
    /// compare-and-swap write. Printed, not asserted.
    @Test func whatTheLeaseCostsARenewal() async throws {
        let store = fixtures.store()
        _ = try await store.setToken(StoreFixtures.token("a"), for: key, ifVersion: 0)
        let rounds = 200
        let clock = ContinuousClock()
        let reads = try await clock.measure {
            for _ in 0..<rounds { _ = try await store.entry(for: key) }
        }
        let leases = try await clock.measure {
            for _ in 0..<rounds {
                let lease = try await store.acquireLease(for: key, duration: .seconds(10))
                try await store.releaseLease(try #require(lease))
            }
        }
        var version = try await store.entry(for: key).version
        let writes = try await clock.measure {
            for index in 0..<rounds / 4 {
                version = try #require(
                    try await store.setToken(StoreFixtures.token("\(index)"), for: key, ifVersion: version)
                )
                .version
            }
        }
        print(
            "[figures] SQLite store, per operation: entry read \(reads / rounds), "
                + "lease acquire + release \(leases / rounds), compare-and-swap write \(writes / (rounds / 4))"
        )
    }
}
