import Courier
import Foundation
import Testing

@testable import CourierSQLite

/// Compare-and-swap writes on a real SQLite file: versions rise with every write, a stale
/// version writes nothing, and no version is ever handed out twice.
@Suite(.timeLimit(.minutes(1)))
struct SQLiteStoreVersionTests {
    let fixtures: StoreFixtures
    let key = TokenStoreKey(clientID: "courier-user", level: .user, user: "alice")

    init() throws { fixtures = try StoreFixtures() }

    @Test func aStaleVersionIsRefusedAndARemovalKeepsItsVersion() async throws {
        let store = fixtures.store()
        #expect(try await store.entry(for: key) == TokenStoreEntry(token: nil, version: 0))
        let first = try #require(try await store.setToken(StoreFixtures.token("1"), for: key, ifVersion: 0))
        #expect(first.version > 0)
        let second = try #require(
            try await store.setToken(StoreFixtures.token("2"), for: key, ifVersion: first.version)
        )
        #expect(second.version > first.version)
        // A process that read the first version must not overwrite the second, nor wipe it.
        #expect(try await store.setToken(StoreFixtures.token("stale"), for: key, ifVersion: first.version) == nil)
        #expect(try await store.setToken(nil, for: key, ifVersion: first.version) == nil)
        #expect(try await store.setToken(StoreFixtures.token("new"), for: key, ifVersion: 0) == nil)
        #expect(try await store.entry(for: key) == second)

        // A removal leaves a tombstone with a higher version: a copy from before it cannot
        // bring the token back, and version 0 does not come back either.
        let removed = try #require(try await store.setToken(nil, for: key, ifVersion: second.version))
        #expect(removed.token == nil && removed.version > second.version)
        #expect(try await store.entry(for: key) == removed)
        #expect(try await store.setToken(StoreFixtures.token("old"), for: key, ifVersion: second.version) == nil)
        #expect(try await store.setToken(StoreFixtures.token("aba"), for: key, ifVersion: 0) == nil)
        let third = try #require(
            try await store.setToken(StoreFixtures.token("3"), for: key, ifVersion: removed.version)
        )
        #expect(third.version > removed.version)
    }

    @Test func thePlainCallsRaiseTheVersionToo() async throws {
        let store = fixtures.store()
        try await store.setToken(StoreFixtures.token("a"), for: key)
        let written = try await store.entry(for: key)
        #expect(written.token == StoreFixtures.token("a") && written.version > 0)
        try await store.setToken(StoreFixtures.token("b"), for: key)
        let rewritten = try await store.entry(for: key)
        #expect(rewritten.token == StoreFixtures.token("b") && rewritten.version > written.version)
        try await store.setToken(nil, for: key)
        let removed = try await store.entry(for: key)
        #expect(removed.token == nil && removed.version > rewritten.version)
        // Removing what is removed already changes nothing.
        try await store.setToken(nil, for: key)
        #expect(try await store.entry(for: key) == removed)
        #expect(try await store.token(for: key) == nil)
    }

    @Test func ofConcurrentWritersOnOneVersionOneWins() async throws {
        // Four instances on one file: four connections, as four processes have.
        let stores = (0..<4).map { _ in fixtures.store() }
        let results = try await withThrowingTaskGroup(of: TokenStoreEntry?.self) { group in
            for index in 0..<16 {
                let store = stores[index % stores.count]
                group.addTask { [key] in
                    try await store.setToken(StoreFixtures.token("\(index)"), for: key, ifVersion: 0)
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let winners = results.compactMap { $0 }
        #expect(winners.count == 1)
        for store in stores { #expect(try await store.entry(for: key) == winners.first) }
    }

    @Test func theUserIsPartOfTheKey() async throws {
        let store = fixtures.store()
        let keys =
            [nil, "", "alice", "alice\u{0}x"].map { TokenStoreKey(clientID: "courier-user", level: .user, user: $0) }
            + [TokenStoreKey(clientID: "courier-user", level: .implicit, user: "alice")]
        for (index, key) in keys.enumerated() {
            _ = try #require(try await store.setToken(StoreFixtures.token("\(index)"), for: key, ifVersion: 0))
        }
        for (index, key) in keys.enumerated() {
            #expect(try await store.token(for: key) == StoreFixtures.token("\(index)"))
        }
    }

    @Test func versionsNeverRepeatForAKeyEvenAfterItsTombstoneIsPruned() async throws {
        var configuration = SQLiteTokenStore.Configuration()
        configuration.tombstoneRetention = .zero
        let store = fixtures.store(configuration: configuration)
        var seen: [UInt64] = []
        let first = try #require(try await store.setToken(StoreFixtures.token("1"), for: key, ifVersion: 0))
        seen.append(first.version)
        let removed = try #require(try await store.setToken(nil, for: key, ifVersion: first.version))
        seen.append(removed.version)
        // A write on a fresh connection prunes (each connection prunes at most once a minute):
        // the tombstone, older than the retention of zero, goes.
        let other = TokenStoreKey(clientID: "courier-user", level: .user, user: "bob")
        _ = try #require(
            try await fixtures.store(configuration: configuration).setToken(
                StoreFixtures.token("bob"),
                for: other,
                ifVersion: 0
            )
        )
        #expect(try await store.entry(for: key) == TokenStoreEntry(token: nil, version: 0))
        // Written again from nothing: its version is new, and every version it had before
        // still fails a compare-and-swap.
        let again = try #require(try await store.setToken(StoreFixtures.token("2"), for: key, ifVersion: 0))
        #expect(!seen.contains(again.version))
        #expect(again.version > removed.version)
        for old in seen {
            #expect(try await store.setToken(StoreFixtures.token("stale"), for: key, ifVersion: old) == nil)
        }
        #expect(try await store.entry(for: key) == again)
    }

    @Test func aTombstoneIsKeptWithinItsRetention() async throws {
        let store = fixtures.store()
        let first = try #require(try await store.setToken(StoreFixtures.token("1"), for: key, ifVersion: 0))
        let removed = try #require(try await store.setToken(nil, for: key, ifVersion: first.version))
        let other = TokenStoreKey(clientID: "courier-user", level: .user, user: "bob")
        _ = try await fixtures.store().setToken(StoreFixtures.token("bob"), for: other, ifVersion: 0)
        #expect(try await store.entry(for: key) == removed)
    }
}
