#if Postgres
import Courier
import CourierPostgres
import Crypto
import Foundation
import PostgresNIO
import Testing

/// Changing the key of a PostgreSQL store: rows sealed under an accepted key open, and every
/// row written is sealed under the provider's own key.
@Suite(.timeLimit(.minutes(1)))
struct PostgresStoreKeyRotationTests {
    let old = SymmetricKey(size: .bits256)
    let new = SymmetricKey(size: .bits256)

    func keys(_ count: Int) -> [TokenStoreKey] {
        [TokenStoreKey(clientID: "courier-device", level: .device)]
            + (1..<count).map { TokenStoreKey(clientID: "courier-user", level: .user, user: "user-\($0)") }
    }

    /// Writes a token under each key with a store on `key`, and returns them.
    func write(
        _ keys: [TokenStoreKey],
        _ servers: PostgresServers,
        table: String,
        key: SymmetricKey
    ) async throws -> [TokenStoreKey: OAuth2Token] {
        try await StoreFixtures.withStore(servers, table: table, key: key) { store in
            var written: [TokenStoreKey: OAuth2Token] = [:]
            for storeKey in keys {
                let token = StoreFixtures.token(storeKey.user ?? "device", refresh: "r")
                _ = try #require(try await store.setToken(token, for: storeKey, ifVersion: 0))
                written[storeKey] = token
            }
            return written
        }
    }

    @Test func rowsUnderTheOldKeyOpenAndWrittenRowsAreUnderTheNewKey() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let keys = keys(4)
        let written = try await write(keys, servers, table: table, key: old)
        let renewed = StoreFixtures.token("renewed", refresh: "r")

        try await StoreFixtures.withStore(servers, table: table, keyProvider: .key(new).accepting(.key(old))) { store in
            for key in keys {
                let entry = try await store.entry(for: key)
                #expect(entry.token?.accessToken == written[key]?.accessToken)
                #expect(entry.version == 1)
            }
            _ = try #require(try await store.setToken(renewed, for: keys[1], ifVersion: 1))
        }
        try await StoreFixtures.withStore(servers, table: table, key: new) { store in
            // The row written is under the new key; the others are still under the old one.
            let rewritten = try await store.entry(for: keys[1])
            #expect(rewritten.token?.accessToken == renewed.accessToken)
            let error = await #expect(throws: CourierError.self) { try await store.entry(for: keys[2]) }
            #expect(error?.kind == .tokenStoreWrongKey)
        }
        // A process still sealing with the old key but accepting the new one (the first step
        // of a fleet's change) reads the rows either key sealed.
        try await StoreFixtures.withStore(servers, table: table, keyProvider: .key(old).accepting(.key(new))) { store in
            let underNew = try await store.token(for: keys[1])
            let underOld = try await store.token(for: keys[2])
            #expect(underNew?.accessToken == renewed.accessToken)
            #expect(underOld?.accessToken == written[keys[2]]?.accessToken)
        }
        try await StoreFixtures.withStore(servers, table: table, key: old) { store in
            let error = await #expect(throws: CourierError.self) { try await store.entry(for: keys[1]) }
            #expect(error?.kind == .tokenStoreWrongKey)
        }
    }

    @Test func resealEntriesSealsEveryRowUnderTheNewKeyKeepingVersions() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        // More rows than one page of the sweep (200 rows).
        let keys = keys(205)
        let written = try await write(keys, servers, table: table, key: old)
        let rotating = TokenStoreKeyProvider.key(new).accepting(.key(old))
        try await StoreFixtures.withStore(servers, table: table, keyProvider: rotating) { store in
            // One row already under the new key, one tombstone, one row with only a lease.
            _ = try #require(try await store.setToken(StoreFixtures.token("x"), for: keys[0], ifVersion: 1))
            _ = try #require(try await store.setToken(nil, for: keys[1], ifVersion: 1))
            let leased = TokenStoreKey(clientID: "courier-user", level: .user, user: "leased")
            _ = try #require(try await store.acquireLease(for: leased, duration: .seconds(30)))

            #expect(try await store.resealEntries() == keys.count - 2)
            #expect(try await store.resealEntries() == 0)
        }
        try await StoreFixtures.withStore(servers, table: table, key: new) { store in
            #expect(try await store.entry(for: keys[1]) == TokenStoreEntry(token: nil, version: 2))
            for key in keys.dropFirst(2) {
                let entry = try await store.entry(for: key)
                #expect(entry.token?.accessToken == written[key]?.accessToken)
                #expect(entry.version == 1)
            }
        }
    }

    @Test func theSweepStopsAtARowUnderAKeyItDoesNotHold() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let keys = keys(2)
        _ = try await write([keys[0]], servers, table: table, key: SymmetricKey(size: .bits256))
        _ = try await write([keys[1]], servers, table: table, key: old)
        try await StoreFixtures.withStore(servers, table: table, keyProvider: .key(new).accepting(.key(old))) { store in
            let error = await #expect(throws: CourierError.self) { try await store.resealEntries() }
            #expect(error?.kind == .tokenStoreWrongKey)
        }
    }
}
#endif
