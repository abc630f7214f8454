import Courier
import Crypto
import Foundation
import Testing

@testable import CourierSQLite

/// A damaged file, a changed row, a row copied under another key, another key: each a typed
/// error, never a garbage token, never a crash — and the file left as it was.
@Suite(.timeLimit(.minutes(1)))
struct SQLiteStoreDamageTests {
    let fixtures: StoreFixtures
    let alice = TokenStoreKey(clientID: "courier-user", level: .user, user: "alice")
    let bob = TokenStoreKey(clientID: "courier-user", level: .user, user: "bob")

    init() throws { fixtures = try StoreFixtures() }

    /// Expects `body` to throw a ``CourierError`` of `kind`.
    func expectError(
        _ kind: CourierError.Kind,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> Void
    ) async {
        do {
            try await body()
            Issue.record("no error; expected \(kind)", sourceLocation: sourceLocation)
        } catch let error as CourierError {
            #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("\(error); expected \(kind)", sourceLocation: sourceLocation)
        }
    }

    /// A store of `users` users' tokens, closed: its file is the whole store.
    func writtenStore(users: Int = 2) async throws {
        let store = fixtures.store()
        try await store.setToken(StoreFixtures.token("alice"), for: alice)
        try await store.setToken(StoreFixtures.token("bob"), for: bob)
        for index in 0..<max(0, users - 2) {
            let key = TokenStoreKey(clientID: "courier-user", level: .user, user: "user-\(index)")
            try await store.setToken(StoreFixtures.token("user-\(index)"), for: key)
        }
        await store.close()
    }

    @Test func aFileThatIsNotADatabaseIsAnUnsupportedFormatAndIsLeftAlone() async throws {
        let garbage = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
        try garbage.write(to: URL(fileURLWithPath: fixtures.path))
        let store = fixtures.store()
        await expectError(.tokenStoreUnsupportedFormat) { _ = try await store.entry(for: alice) }
        await expectError(.tokenStoreUnsupportedFormat) {
            try await store.setToken(StoreFixtures.token("a"), for: alice)
        }
        await expectError(.tokenStoreUnsupportedFormat) {
            _ = try await store.acquireLease(for: alice, duration: .seconds(1))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixtures.path)) == garbage)
    }

    @Test func anotherApplicationsDatabaseIsAnUnsupportedFormatAndIsLeftAlone() async throws {
        let other = try RawDatabase(fixtures.path, create: true)
        try other.execute("CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')")
        let store = fixtures.store()
        await expectError(.tokenStoreUnsupportedFormat) {
            try await store.setToken(StoreFixtures.token("a"), for: alice)
        }
        #expect(try other.strings("SELECT name FROM sqlite_master") == ["notes"])
    }

    @Test func aStoreOfANewerSchemaIsAnUnsupportedFormat() async throws {
        try await writtenStore()
        try RawDatabase(fixtures.path).execute("PRAGMA user_version = 2")
        await expectError(.tokenStoreUnsupportedFormat) { _ = try await fixtures.store().entry(for: alice) }
    }

    @Test func aCorruptedPageIsTampering() async throws {
        try await writtenStore(users: 400)
        let root = try #require(
            Int(
                try RawDatabase(fixtures.path).strings(
                    "SELECT rootpage FROM sqlite_master WHERE name = 'tokens'"
                ).first ?? ""
            )
        )
        let pageSize = try #require(Int(try RawDatabase(fixtures.path).strings("PRAGMA page_size").first ?? ""))
        // The table's root page: its b-tree header, overwritten as a bad disk or an editor would.
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: fixtures.path))
        try file.seek(toOffset: UInt64((root - 1) * pageSize))
        try file.write(contentsOf: Data(repeating: 0xA5, count: 64))
        try file.close()
        let store = fixtures.store()
        await expectError(.tokenStoreTampered) { _ = try await store.entry(for: alice) }
        await expectError(.tokenStoreTampered) { try await store.setToken(StoreFixtures.token("new"), for: bob) }
    }

    @Test func aFileCutShortIsDamageNeverAToken() async throws {
        try await writtenStore(users: 400)
        let size = try #require(try FileManager.default.attributesOfItem(atPath: fixtures.path)[.size] as? NSNumber)
        let file = try FileHandle(forUpdating: URL(fileURLWithPath: fixtures.path))
        try file.truncate(atOffset: UInt64(size.intValue / 2))
        try file.close()
        let store = fixtures.store()
        var damaged = 0
        for index in 0..<398 {
            let key = TokenStoreKey(clientID: "courier-user", level: .user, user: "user-\(index)")
            do {
                // What is still there reads as written; nothing reads as anything else.
                if let token = try await store.token(for: key) {
                    #expect(token == StoreFixtures.token("user-\(index)"))
                }
            } catch let error as CourierError {
                #expect(error.kind == .tokenStoreTampered, "\(error)")
                damaged += 1
            }
        }
        #expect(damaged > 0)
    }

    @Test func aChangedRowIsTampering() async throws {
        try await writtenStore()
        let raw = try RawDatabase(fixtures.path)
        let hex = try #require(try raw.strings("SELECT hex(sealed_token) FROM tokens WHERE user_key = 'bob'").first)
        // One bit of the ciphertext flipped (the last character: inside the tag).
        let flipped = String(hex.dropLast()) + (hex.last == "0" ? "1" : "0")
        try raw.execute("UPDATE tokens SET sealed_token = X'\(flipped)' WHERE user_key = 'bob'")
        let store = fixtures.store()
        await expectError(.tokenStoreTampered) { _ = try await store.entry(for: bob) }
        #expect(try await store.token(for: alice) == StoreFixtures.token("alice"))
    }

    @Test func aRowCopiedUnderAnotherKeyDoesNotOpen() async throws {
        try await writtenStore()
        try RawDatabase(fixtures.path).execute(
            """
            UPDATE tokens SET sealed_token = (SELECT sealed_token FROM tokens WHERE user_key = 'alice')
            WHERE user_key = 'bob'
            """
        )
        let store = fixtures.store()
        await expectError(.tokenStoreTampered) { _ = try await store.token(for: bob) }
        #expect(try await store.token(for: alice) == StoreFixtures.token("alice"))
    }

    @Test func anotherKeyIsTheWrongKey() async throws {
        try await writtenStore()
        let store = fixtures.store(key: SymmetricKey(size: .bits256))
        await expectError(.tokenStoreWrongKey) { _ = try await store.token(for: alice) }
        // An entry that holds no token needs no key.
        let carol = TokenStoreKey(clientID: "courier-user", level: .user, user: "carol")
        #expect(try await store.entry(for: carol) == TokenStoreEntry(token: nil, version: 0))
        #expect(try await fixtures.store().token(for: alice) == StoreFixtures.token("alice"))
    }

    @Test func aKeyProviderThatFailsIsTyped() async throws {
        let store = SQLiteTokenStore(
            path: fixtures.path,
            keyProvider: TokenStoreKeyProvider { throw CancellationError() }
        )
        await expectError(.tokenStoreKeyUnavailable) { try await store.setToken(StoreFixtures.token("a"), for: alice) }
        #expect(try await store.entry(for: alice) == TokenStoreEntry(token: nil, version: 0))
    }
}
