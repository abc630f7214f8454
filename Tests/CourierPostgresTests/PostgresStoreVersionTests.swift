#if Postgres
import Courier
import CourierPostgres
import Crypto
import Testing

/// Compare-and-swap writes against a real PostgreSQL.
@Suite(.timeLimit(.minutes(1)))
struct PostgresStoreVersionTests {
    let key = TokenStoreKey(clientID: "courier-device", level: .device)

    @Test func ofTwoConcurrentFirstWritersOneWins() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let secret = SymmetricKey(size: .bits256)
        let tokens = [StoreFixtures.token("a"), StoreFixtures.token("b")]
        // Two stores, two pools: as two processes would.
        try await StoreFixtures.withStore(servers, table: table, key: secret) { first in
            try await StoreFixtures.withStore(servers, table: table, key: secret) { second in
                try await first.prepare()
                async let a = first.setToken(tokens[0], for: key, ifVersion: 0)
                async let b = second.setToken(tokens[1], for: key, ifVersion: 0)
                let results = try await [a, b]
                let winners = results.compactMap { $0 }
                #expect(winners.count == 1)
                #expect(winners.first?.version == 1)
                let entry = try await second.entry(for: key)
                #expect(entry.version == 1)
                #expect(entry.token?.accessToken == winners.first?.token?.accessToken)
            }
        }
    }

    @Test func aStaleVersionIsRefused() async throws {
        let servers = try await PostgresServers.shared()
        try await StoreFixtures.withStore(servers, table: StoreFixtures.uniqueTable(), key: .init(size: .bits256)) {
            store in
            #expect(try await store.entry(for: key) == TokenStoreEntry(token: nil, version: 0))
            let first = try #require(try await store.setToken(StoreFixtures.token("1"), for: key, ifVersion: 0))
            let second = try #require(
                try await store.setToken(StoreFixtures.token("2"), for: key, ifVersion: first.version)
            )
            #expect(second.version == 2)
            // A process that read version 1 must not overwrite version 2, nor wipe it.
            #expect(try await store.setToken(StoreFixtures.token("stale"), for: key, ifVersion: 1) == nil)
            #expect(try await store.setToken(nil, for: key, ifVersion: 1) == nil)
            #expect(try await store.setToken(StoreFixtures.token("new"), for: key, ifVersion: 0) == nil)
            let entry = try await store.entry(for: key)
            #expect(entry.version == 2)
            #expect(entry.token?.accessToken == second.token?.accessToken)
        }
    }

    @Test func aRemovalLeavesATombstoneAndVersionsKeepRising() async throws {
        let servers = try await PostgresServers.shared()
        try await StoreFixtures.withStore(servers, table: StoreFixtures.uniqueTable(), key: .init(size: .bits256)) {
            store in
            _ = try #require(try await store.setToken(StoreFixtures.token("1"), for: key, ifVersion: 0))
            let removed = try #require(try await store.setToken(nil, for: key, ifVersion: 1))
            #expect(removed == TokenStoreEntry(token: nil, version: 2))
            #expect(try await store.entry(for: key) == TokenStoreEntry(token: nil, version: 2))
            // Version 0 never comes back: a writer that saw nothing at the start loses.
            #expect(try await store.setToken(StoreFixtures.token("aba"), for: key, ifVersion: 0) == nil)
            let third = try #require(try await store.setToken(StoreFixtures.token("3"), for: key, ifVersion: 2))
            #expect(third.version == 3)
            // The plain TokenStore calls raise the version too.
            try await store.setToken(nil, for: key)
            #expect(try await store.entry(for: key).version == 4)
            try await store.setToken(StoreFixtures.token("5"), for: key)
            try await store.removeTokens(clientID: key.clientID)
            #expect(try await store.entry(for: key) == TokenStoreEntry(token: nil, version: 6))
        }
    }

    @Test func theUserIsPartOfTheKey() async throws {
        let servers = try await PostgresServers.shared()
        try await StoreFixtures.withStore(servers, table: StoreFixtures.uniqueTable(), key: .init(size: .bits256)) {
            store in
            let keys = [nil, "", "alice"].map { TokenStoreKey(clientID: "courier-user", level: .user, user: $0) }
            for (index, key) in keys.enumerated() {
                _ = try #require(try await store.setToken(StoreFixtures.token("\(index)"), for: key, ifVersion: 0))
            }
            let tokens = try await keys.asyncMap { try await store.token(for: $0)?.accessToken }
            #expect(Set(tokens.compactMap { $0 }).count == 3)
        }
    }
}

extension Array {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var results: [T] = []
        for element in self { results.append(try await transform(element)) }
        return results
    }
}
#endif
