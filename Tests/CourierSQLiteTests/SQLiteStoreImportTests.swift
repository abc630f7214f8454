import Courier
import Crypto
import Foundation
import Testing

@testable import CourierSQLite

/// The move from an ``EncryptedFileTokenStore``: a real file store's file, with several users
/// and removed entries, copied into the SQLite store.
@Suite(.timeLimit(.minutes(1)))
struct SQLiteStoreImportTests {
    let fixtures: StoreFixtures
    let fileKey = SymmetricKey(size: .bits256)

    init() throws { fixtures = try StoreFixtures() }

    var filePath: String { fixtures.directory + "/tokens.store" }

    func key(_ user: String?, _ level: AuthorizationLevel = .user) -> TokenStoreKey {
        TokenStoreKey(clientID: "courier-user", level: level, user: user)
    }

    /// A file store as a service left it: five users, the single user, the device token, and
    /// two users who logged out (their entries are tombstones).
    func fileStore() async throws -> (live: [TokenStoreKey], removed: [TokenStoreKey]) {
        let store = EncryptedFileTokenStore(path: filePath, keyProvider: .key(fileKey))
        let users = (0..<5).map { key("user-\($0)") } + [key("user-0", .implicit)]
        let live = users + [key(nil), TokenStoreKey(clientID: "courier-device", level: .device)]
        let removed = [key("gone-1"), key("gone-2")]
        for key in live + removed { try await store.setToken(StoreFixtures.token(key.description), for: key) }
        // A token renewed twice: the file keeps the last.
        try await store.setToken(StoreFixtures.token("renewed"), for: key("user-1"))
        for key in removed { try await store.setToken(nil, for: key) }
        #expect(try await store.entry(for: removed[0]).version == 2)
        return (live, removed)
    }

    func expected(_ key: TokenStoreKey) -> OAuth2Token {
        StoreFixtures.token(key == self.key("user-1") ? "renewed" : key.description)
    }

    @Test func everyTokenIsCopiedAndRemovedEntriesAreNot() async throws {
        let (live, removed) = try await fileStore()
        let store = fixtures.store()
        #expect(try await store.importEntries(fromFileStoreAt: filePath, keyProvider: .key(fileKey)) == live.count)
        for key in live { #expect(try await store.token(for: key) == expected(key), "\(key)") }
        for key in removed { #expect(try await store.entry(for: key) == TokenStoreEntry(token: nil, version: 0)) }
        // The copies are entries like any other: versioned, written over by compare-and-swap.
        let entry = try await store.entry(for: live[0])
        #expect(entry.version > 0)
        #expect(try await store.setToken(StoreFixtures.token("next"), for: live[0], ifVersion: entry.version) != nil)
    }

    @Test func importingAgainCopiesNothingAndNeverOverwrites() async throws {
        let (live, removed) = try await fileStore()
        let store = fixtures.store()
        // Before the import this store already has a newer token for one user and a logout
        // for another: both stay.
        try await store.setToken(StoreFixtures.token("newer"), for: key("user-2"))
        try await store.setToken(StoreFixtures.token("soon gone"), for: key("user-3"))
        try await store.removeTokens(clientID: "courier-user", user: "user-3")
        let copied = try await store.importEntries(fromFileStoreAt: filePath, keyProvider: .key(fileKey))
        #expect(copied == live.count - 2)
        #expect(try await store.token(for: key("user-2")) == StoreFixtures.token("newer"))
        #expect(try await store.token(for: key("user-3")) == nil)
        var entries: [TokenStoreKey: TokenStoreEntry] = [:]
        for key in live + removed { entries[key] = try await store.entry(for: key) }

        #expect(try await store.importEntries(fromFileStoreAt: filePath, keyProvider: .key(fileKey)) == 0)
        for key in live + removed { #expect(try await store.entry(for: key) == entries[key], "\(key)") }
    }

    /// Tokens from a source of the caller's: copied under their keys, never over what the
    /// store holds, the first of a key given twice, and readable from another instance (a
    /// process of its own).
    @Test func tokensFromAnySourceAreCopiedInOneTransaction() async throws {
        let store = fixtures.store()
        try await store.setToken(StoreFixtures.token("newer"), for: key("user-1"))
        try await store.setToken(StoreFixtures.token("soon gone"), for: key("user-2"))
        try await store.removeTokens(clientID: "courier-user", user: "user-2")
        let users = (0..<2_500).map { "user-\($0)" }
        let source = users.lazy.map { (key: key($0), token: StoreFixtures.token($0)) }
        let copied = try await store.importEntries(source + [(key: key("user-7"), token: StoreFixtures.token("twice"))])
        #expect(copied == users.count - 2)

        let other = fixtures.store()
        #expect(try await other.token(for: key("user-0")) == StoreFixtures.token("user-0"))
        #expect(try await other.token(for: key("user-2499")) == StoreFixtures.token("user-2499"))
        #expect(try await other.token(for: key("user-7")) == StoreFixtures.token("user-7"))
        #expect(try await other.token(for: key("user-1")) == StoreFixtures.token("newer"))
        #expect(try await other.token(for: key("user-2")) == nil)
        // All under one version: one transaction.
        var versions: Set<UInt64> = []
        for user in users.prefix(20).dropFirst(3) { versions.insert(try await other.entry(for: key(user)).version) }
        #expect(versions.count == 1)
        #expect(try await store.importEntries(source) == 0)
        #expect(try await store.importEntries([(key: TokenStoreKey, token: OAuth2Token)]()) == 0)
    }

    /// A batch whose commit fails half-way — here a trigger refuses one row, as a full disk or
    /// a damaged page would — writes none of its tokens; the same batch again copies them all.
    @Test func aBatchThatFailsWritesNothing() async throws {
        let store = fixtures.store()
        try await store.setToken(StoreFixtures.token("first"), for: key("first"))
        let raw = try RawDatabase(fixtures.path)
        try raw.execute(
            """
            CREATE TRIGGER refuse BEFORE INSERT ON tokens WHEN NEW.user_key = 'user-500'
            BEGIN SELECT RAISE(ABORT, 'refused'); END
            """
        )
        let batch = (0..<1_000).map { (key: key("user-\($0)"), token: StoreFixtures.token("user-\($0)")) }
        await #expect(throws: CourierError.self) { try await store.importEntries(batch) }
        for user in ["user-0", "user-499", "user-999"] {
            #expect(try await store.entry(for: key(user)) == TokenStoreEntry(token: nil, version: 0))
        }
        try raw.execute("DROP TRIGGER refuse")
        #expect(try await store.importEntries(batch) == batch.count)
        #expect(try await store.token(for: key("user-999")) == StoreFixtures.token("user-999"))
    }

    @Test func theFileStoresDefaultKeyFileIsUsedByDefault() async throws {
        let file = EncryptedFileTokenStore(path: filePath)
        try await file.setToken(StoreFixtures.token("a"), for: key("alice"))
        let store = fixtures.store()
        #expect(try await store.importEntries(fromFileStoreAt: filePath) == 1)
        #expect(try await store.token(for: key("alice")) == StoreFixtures.token("a"))
    }

    @Test func aMissingFileHasNothingToCopy() async throws {
        #expect(try await fixtures.store().importEntries(fromFileStoreAt: filePath, keyProvider: .key(fileKey)) == 0)
    }

    @Test func aFileThatDoesNotOpenCopiesNothing() async throws {
        let (live, _) = try await fileStore()
        let store = fixtures.store()
        do {
            _ = try await store.importEntries(
                fromFileStoreAt: filePath,
                keyProvider: .key(SymmetricKey(size: .bits256))
            )
            Issue.record("a file sealed with another key was read")
        } catch let error as CourierError {
            #expect(error.kind == .tokenStoreWrongKey)
        }
        // Cut short: the file store's own damage kind.
        let data = try Data(contentsOf: URL(fileURLWithPath: filePath))
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: filePath))
        do {
            _ = try await store.importEntries(fromFileStoreAt: filePath, keyProvider: .key(fileKey))
            Issue.record("a cut file was read")
        } catch let error as CourierError {
            #expect(error.kind == .tokenStoreTruncated)
        }
        for key in live { #expect(try await store.entry(for: key) == TokenStoreEntry(token: nil, version: 0)) }
    }
}
