#if Postgres
import Courier
import CourierPostgres
import Crypto
import Foundation
import Testing

/// Leases on the database's clock, against a real PostgreSQL.
@Suite(.timeLimit(.minutes(1)))
struct PostgresStoreLeaseTests {
    let key = TokenStoreKey(clientID: "courier-user", level: .user, user: "alice")

    @Test func ofManyConcurrentAcquirersOneWins() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let secret = SymmetricKey(size: .bits256)
        try await StoreFixtures.withStore(servers, table: table, key: secret) { first in
            try await StoreFixtures.withStore(servers, table: table, key: secret) { second in
                try await first.prepare()
                let leases = try await withThrowingTaskGroup(of: TokenStoreLease?.self) { group in
                    for index in 0..<24 {
                        let store = index.isMultiple(of: 2) ? first : second
                        group.addTask { try await store.acquireLease(for: key, duration: .seconds(30)) }
                    }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
                #expect(leases.compactMap { $0 }.count == 1)
            }
        }
    }

    @Test func aReleasedLeaseCanBeTakenAgain() async throws {
        let servers = try await PostgresServers.shared()
        try await StoreFixtures.withStore(servers, table: StoreFixtures.uniqueTable(), key: .init(size: .bits256)) {
            store in
            let lease = try #require(try await store.acquireLease(for: key, duration: .seconds(30)))
            #expect(lease.expiresAt > Date().addingTimeInterval(20))
            #expect(try await store.acquireLease(for: key, duration: .seconds(30)) == nil)
            try await store.releaseLease(lease)
            let next = try #require(try await store.acquireLease(for: key, duration: .seconds(30)))
            #expect(next.holder != lease.holder)
            // A lease leaves the entry's version alone.
            #expect(try await store.entry(for: key) == TokenStoreEntry(token: nil, version: 0))
            _ = try #require(try await store.setToken(StoreFixtures.token("x"), for: key, ifVersion: 0))
        }
    }

    @Test func aReleaseByAnotherHolderChangesNothing() async throws {
        let servers = try await PostgresServers.shared()
        try await StoreFixtures.withStore(servers, table: StoreFixtures.uniqueTable(), key: .init(size: .bits256)) {
            store in
            let lease = try #require(try await store.acquireLease(for: key, duration: .seconds(30)))
            var forged = lease
            forged.holder = "someone else"
            try await store.releaseLease(forged)
            #expect(try await store.acquireLease(for: key, duration: .seconds(30)) == nil)
        }
    }

    @Test func aHolderThatNeverReleasesIsReplacedAfterExpiry() async throws {
        let servers = try await PostgresServers.shared()
        try await StoreFixtures.withStore(servers, table: StoreFixtures.uniqueTable(), key: .init(size: .bits256)) {
            store in
            let dead = try #require(try await store.acquireLease(for: key, duration: .milliseconds(300)))
            // Polled, bounded in count and time: the database's clock decides, not ours.
            var replacement: TokenStoreLease?
            for _ in 0..<200 where replacement == nil {
                replacement = try await store.acquireLease(for: key, duration: .seconds(30))
                if replacement == nil { try await Task.sleep(for: .milliseconds(25)) }
            }
            let taken = try #require(replacement)
            #expect(taken.holder != dead.holder)
            #expect(taken.expiresAt > dead.expiresAt)
            // The dead holder waking up and releasing does not end the new lease.
            try await store.releaseLease(dead)
            #expect(try await store.acquireLease(for: key, duration: .seconds(30)) == nil)
        }
    }
}
#endif
