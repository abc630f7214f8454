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
