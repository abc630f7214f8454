import Courier
import Crypto
import Foundation
import Testing

@testable import CourierSQLite

/// The last step of a change of key: ``SQLiteTokenStore/resealEntries()`` on a real file
/// seals every token again under the new key, keeps the tokens and their versions, leaves
/// rows written meanwhile alone, and stops at a row no key opens.
@Suite(.timeLimit(.minutes(1)))
struct SQLiteStoreResealTests {
    let fixtures: StoreFixtures
    let keyA: SymmetricKey
    let keyB = SymmetricKey(size: .bits256)

    init() throws {
        fixtures = try StoreFixtures()
        keyA = fixtures.key
    }

    func key(_ user: Int) -> TokenStoreKey {
        TokenStoreKey(clientID: "courier-user", level: .user, user: String(format: "user-%05d", user))
    }

    /// A store that seals with B and still opens what A sealed.
    func rotatingStore() -> SQLiteTokenStore {
        SQLiteTokenStore(path: fixtures.path, keyProvider: TokenStoreKeyProvider.key(keyB).accepting(.key(keyA)))
    }

    @Test func everyTokenIsSealedAgainUnderTheNewKeyWithItsVersion() async throws {
        defer { fixtures.remove() }
        // More users than one batch holds, a tombstone, and entries of other kinds.
        let users = SQLiteTokenStore.resealBatchSize * 2 + 37
        let old = fixtures.store()
        try await old.fill((0..<users).map { (key($0), StoreFixtures.token("\($0)")) })
        let device = TokenStoreKey(clientID: "courier-device", level: .device)
        try await old.setToken(StoreFixtures.token("device"), for: device)
        try await old.setToken(StoreFixtures.token("gone"), for: key(users))
        try await old.setToken(nil, for: key(users))
        let keys = (0..<users).map(key) + [device]
        var before: [TokenStoreKey: TokenStoreEntry] = [:]
        for key in keys { before[key] = try await old.entry(for: key) }

        let store = rotatingStore()
        #expect(try await store.resealEntries() == keys.count)
        // Nothing is left to do: a second run writes nothing.
        #expect(try await store.resealEntries() == 0)

        // The new key alone opens every token, as it was, with its version; the old key alone
        // opens none.
        let new = fixtures.store(key: keyB)
        for key in keys { #expect(try await new.entry(for: key) == before[key], "\(key)") }
        #expect(try await new.entry(for: key(users)).token == nil)
        let rows = try await store.sealedRows()
        #expect(rows.count == keys.count)
        for row in rows { #expect(try await store.isSealed(row.sealed, under: .key(keyB))) }
        await #expect(throws: CourierError.self) { try await old.entry(for: key(0)) }
        do {
            _ = try await fixtures.store().entry(for: key(users - 1))
            Issue.record("a token sealed again opened under the old key alone")
        } catch let error as CourierError {
            #expect(error.kind == .tokenStoreWrongKey)
        }
    }

    @Test func aStoreWithoutAcceptedKeysHasNothingToReseal() async throws {
        defer { fixtures.remove() }
        let store = fixtures.store()
        #expect(try await store.resealEntries() == 0)
        try await store.fill((0..<10).map { (key($0), StoreFixtures.token("\($0)")) })
        #expect(try await store.resealEntries() == 0)
        #expect(try await store.token(for: key(3)) == StoreFixtures.token("3"))
    }

    @Test func aRowWrittenAfterItWasReadIsLeftToItsWriter() async throws {
        defer { fixtures.remove() }
        try await fixtures.store().fill((0..<3).map { (key($0), StoreFixtures.token("\($0)")) })
        let store = rotatingStore()
        let signingKey = try await store.sealer.key()
        // The sweep reads the rows and seals them again; before it writes, another process
        // (another store on the file, still sealing with A) writes user 1.
        let read = try await store.sealedRows()
        let replacements = try read.map { row in
            let context = row.key.sealingContext
            let plaintext = try store.sealer.open(row.sealed, key: signingKey, context: context)
            return TokenTable.Replacement(
                row: row,
                sealed: try store.sealer.seal(plaintext, key: signingKey, context: context)
            )
        }
        let other = fixtures.store()
        let entry = try await other.entry(for: key(1))
        let written = try #require(
            try await other.setToken(StoreFixtures.token("meanwhile"), for: key(1), ifVersion: entry.version)
        )
        let replaced = try await store.write("reseal") { connection in try TokenTable.replace(connection, replacements)
        }
        #expect(replaced == 2)
        // The write made meanwhile is there, with its version: not the token the sweep read.
        #expect(try await store.entry(for: key(1)) == written)
        #expect(try await store.entry(for: key(0)).token == StoreFixtures.token("0"))
        // Only that row is still under A, and the next sweep takes it.
        #expect(try await store.resealEntries() == 1)
        #expect(try await fixtures.store(key: keyB).entry(for: key(1)) == written)
    }

    @Test func aRowUnderAnUnknownKeyStopsTheSweepAndWhatWasSealedAgainStays() async throws {
        defer { fixtures.remove() }
        let keyC = SymmetricKey(size: .bits256)
        // Users 0–9 and 20–29 under A; user 10 under a key the rotating store does not know.
        try await fixtures.store().fill(((0..<10).map(key) + (20..<30).map(key)).map { ($0, StoreFixtures.token("a")) })
        try await fixtures.store(key: keyC).setToken(StoreFixtures.token("c"), for: key(10))

        let store = rotatingStore()
        do {
            try await store.resealEntries()
            Issue.record("the sweep opened a row under an unknown key")
        } catch let error as CourierError {
            #expect(error.kind == .tokenStoreWrongKey)
        }
        // The rows before it in key order were sealed again and stay so; the rest wait.
        let new = fixtures.store(key: keyB)
        for user in 0..<10 { #expect(try await new.token(for: key(user)) == StoreFixtures.token("a")) }
        let rows = try await store.sealedRows()
        for row in rows where row.key.user >= key(20).user! {
            #expect(try await store.isSealed(row.sealed, under: .key(keyA)))
        }
        // With the key of that row accepted too, the sweep finishes.
        let complete = SQLiteTokenStore(
            path: fixtures.path,
            keyProvider: TokenStoreKeyProvider.key(keyB).accepting(.key(keyA), .key(keyC))
        )
        #expect(try await complete.resealEntries() == 11)
        #expect(try await complete.resealEntries() == 0)
        #expect(try await new.token(for: key(10)) == StoreFixtures.token("c"))
        #expect(try await new.token(for: key(25)) == StoreFixtures.token("a"))
    }
}
