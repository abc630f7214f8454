import Crypto
import Foundation
import Testing

@testable import Courier

/// Changing a token store's key: a provider that accepts other keys opens what they sealed,
/// and writes seal under its own key.
@Suite(.timeLimit(.minutes(1)))
struct TokenStoreKeyRotationTests {
    let directory: String
    let old = SymmetricKey(size: .bits256)
    let new = SymmetricKey(size: .bits256)
    let userKey = TokenStoreKey(clientID: "courier-user", level: .user, user: "alice")
    let deviceKey = TokenStoreKey(clientID: "courier-device", level: .device)

    init() throws {
        directory = NSTemporaryDirectory() + "courier-rotation-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/tokens.store" }

    func token(_ name: String) -> OAuth2Token {
        OAuth2Token(
            accessToken: "access-\(name)",
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_600),
            refreshToken: "refresh-\(name)"
        )
    }

    func store(_ provider: TokenStoreKeyProvider) -> EncryptedFileTokenStore {
        EncryptedFileTokenStore(path: path, keyProvider: provider)
    }

    /// Replaces the file with one holding `token` for `userKey`, sealed under `key`.
    func replaceFile(with token: OAuth2Token, under key: SymmetricKey) async throws {
        try FileManager.default.removeItem(atPath: path)
        try await store(.key(key)).setToken(token, for: userKey)
    }

    /// A provider that counts how often it is asked, and fails while `failing` says so.
    final class CountingProvider: Sendable {
        let bytes: [UInt8]
        let asked = LockedBox(0)
        let failing: LockedBox<Bool>

        init(_ key: SymmetricKey, failing: Bool = false) {
            self.bytes = key.withUnsafeBytes { Array($0) }
            self.failing = LockedBox(failing)
        }

        var provider: TokenStoreKeyProvider {
            TokenStoreKeyProvider { [self] in
                asked.withLock { $0 += 1 }
                if failing.withLock({ $0 }) { throw CourierError(.tokenStoreKeyUnavailable, message: "vault is down") }
                return SymmetricKey(data: bytes)
            }
        }
    }

    @Test func aFileUnderTheOldKeyOpensAndTheNextWriteSealsItUnderTheNewKey() async throws {
        try await store(.key(old)).setToken(token("u"), for: userKey)
        try await store(.key(old)).setToken(token("d"), for: deviceKey)
        await #expect(throws: CourierError(.tokenStoreWrongKey)) { try await store(.key(new)).token(for: userKey) }

        let rotating = store(.key(new).accepting(.key(old)))
        #expect(try await rotating.token(for: userKey) == token("u"))
        #expect(try await rotating.token(for: deviceKey) == token("d"))
        // Reading changes nothing: the file is still under the old key.
        #expect(try await store(.key(old)).token(for: userKey) == token("u"))

        try await rotating.setToken(token("u2"), for: userKey)
        // One write sealed the whole file under the new key: the old key is no longer needed.
        #expect(try await store(.key(new)).token(for: userKey) == token("u2"))
        #expect(try await store(.key(new)).token(for: deviceKey) == token("d"))
        await #expect(throws: CourierError(.tokenStoreWrongKey)) { try await store(.key(old)).token(for: deviceKey) }
    }

    @Test func resealEntriesFinishesTheChangeWithoutChangingEntries() async throws {
        try await store(.key(old)).setToken(token("u"), for: userKey)
        try await store(.key(old)).setToken(token("d"), for: deviceKey)
        let before = try await store(.key(old)).entry(for: userKey)

        let rotating = store(.key(new).accepting(.key(old)))
        #expect(try await rotating.resealEntries() == 2)
        #expect(try await rotating.resealEntries() == 0)

        let after = try await store(.key(new)).entry(for: userKey)
        #expect(after == before)
        #expect(try await store(.key(new)).token(for: deviceKey) == token("d"))
        // A store with no file has nothing to seal again.
        let empty = EncryptedFileTokenStore(path: directory + "/none.store", keyProvider: .key(new))
        #expect(try await empty.resealEntries() == 0)
    }

    /// Step 1 of a fleet's change: the processes that still seal with the old key accept the
    /// new one, so they read what a process already on the new key wrote, and the other way.
    @Test func processesOnEitherSideOfTheChangeReadEachOthersWrites() async throws {
        let notYet = store(.key(old).accepting(.key(new)))
        let already = store(.key(new).accepting(.key(old)))
        try await notYet.setToken(token("1"), for: userKey)
        #expect(try await already.token(for: userKey) == token("1"))
        try await already.setToken(token("2"), for: userKey)
        #expect(try await store(.key(new)).token(for: userKey) == token("2"))
        #expect(try await notYet.token(for: userKey) == token("2"))
        try await notYet.setToken(token("3"), for: deviceKey)
        // The process on the old key sealed the file under the old key again.
        #expect(try await store(.key(old)).token(for: userKey) == token("2"))
        #expect(try await already.token(for: deviceKey) == token("3"))
    }

    @Test func aValueUnderAKeyNeitherCurrentNorAcceptedIsWrongKey() async throws {
        try await store(.key(SymmetricKey(size: .bits256))).setToken(token("u"), for: userKey)
        let rotating = store(.key(new).accepting(.key(old)))
        await #expect(throws: CourierError(.tokenStoreWrongKey)) { try await rotating.token(for: userKey) }
        // A write must not replace a file it cannot read, nor can the sweep.
        await #expect(throws: CourierError(.tokenStoreWrongKey)) { try await rotating.setToken(nil, for: deviceKey) }
        await #expect(throws: CourierError(.tokenStoreWrongKey)) { try await rotating.resealEntries() }
    }

    @Test func anAcceptedKeyThatCannotLoadDoesNotStopAStoreUnderTheCurrentKey() async throws {
        let broken = CountingProvider(old, failing: true)
        let rotating = store(.key(new).accepting(broken.provider))
        try await rotating.setToken(token("u"), for: userKey)
        for _ in 0..<3 {
            #expect(try await rotating.token(for: userKey) == token("u"))
        }
        try await rotating.setToken(token("d"), for: deviceKey)
        // Asked once; its failure is kept, not asked again while nothing needs it.
        #expect(broken.asked.withLock { $0 } == 1)

        // A file under the key it could not load: wrong key, saying why.
        try await replaceFile(with: token("o"), under: old)
        let error = await #expect(throws: CourierError.self) { try await rotating.token(for: userKey) }
        #expect(error?.kind == .tokenStoreWrongKey)
        #expect(error?.message.contains("vault is down") == true)
        // Once it loads, the next call asks for it again and opens the file.
        broken.failing.withLock { $0 = false }
        #expect(try await rotating.token(for: userKey) == token("o"))
        #expect(broken.asked.withLock { $0 } == 2)
    }

    @Test func theKeysAreAskedForOnceAndKept() async throws {
        let current = CountingProvider(new)
        let accepted = CountingProvider(old)
        try await store(.key(old)).setToken(token("u"), for: userKey)
        let rotating = store(current.provider.accepting(accepted.provider))
        #expect(try await rotating.token(for: userKey) == token("u"))
        try await rotating.setToken(token("d"), for: deviceKey)
        #expect(try await rotating.token(for: deviceKey) == token("d"))
        #expect(current.asked.withLock { $0 } == 1)
        #expect(accepted.asked.withLock { $0 } == 1)
    }

    @Test func concurrentFirstCallsAllOpenTheFileUnderTheAcceptedKey() async throws {
        try await store(.key(old)).setToken(token("u"), for: userKey)
        let rotating = store(.key(new).accepting(.key(old)))
        let key = userKey
        let reads = try await withThrowingTaskGroup(of: OAuth2Token?.self) { group in
            for _ in 0..<16 { group.addTask { try await rotating.token(for: key) } }
            return try await group.reduce(into: [OAuth2Token?]()) { $0.append($1) }
        }
        #expect(reads == Array(repeating: token("u"), count: 16))
    }

    @Test func acceptedKeysChainAndAnAcceptedKeyOfTheWrongSizeIsNotHeld() async throws {
        let oldest = SymmetricKey(size: .bits256)
        try await store(.key(oldest)).setToken(token("u"), for: userKey)
        // A provider given to `accepting` brings the keys it accepts.
        let chained = store(.key(new).accepting(.key(old).accepting(.key(oldest))))
        #expect(try await chained.token(for: userKey) == token("u"))

        let short = SymmetricKey(size: .bits128)
        try await replaceFile(with: token("n"), under: new)
        let withShortKey = store(.key(new).accepting(.key(short)))
        #expect(try await withShortKey.token(for: userKey) == token("n"))
        try await replaceFile(with: token("o"), under: oldest)
        let error = await #expect(throws: CourierError.self) { try await withShortKey.token(for: userKey) }
        #expect(error?.kind == .tokenStoreWrongKey)
        #expect(error?.message.contains("128 bits") == true)
    }

    @Test func theSealerTellsWhichKeyAValueIsUnder() async throws {
        let sealer = TokenSealer(keyProvider: .key(new).accepting(.key(old)))
        let current = try await sealer.key()
        let underNew = try sealer.seal(Data("token".utf8), key: current, context: Data("row".utf8))
        let underOld = try TokenSealer(keyProvider: .key(old)).seal(Data("token".utf8), key: old)
        #expect(sealer.isSealed(underNew, under: current))
        #expect(!sealer.isSealed(underOld, under: current))
        #expect(sealer.isSealed(underOld, under: old))
        #expect(!sealer.isSealed(Data("CTKS".utf8), under: current))
        #expect(!sealer.isSealed(Data(), under: current))
        // An accepted key opens its values, and the context still binds them.
        #expect(try sealer.open(underOld, key: current) == Data("token".utf8))
        #expect(throws: CourierError(.tokenStoreTampered)) {
            try sealer.open(underOld, key: current, context: Data("row".utf8))
        }
    }
}
