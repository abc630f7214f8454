import Crypto
import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
import Glibc
#endif

/// The encrypted file store: encryption, damage detection, permissions, atomic writes.
@Suite(.timeLimit(.minutes(1)))
struct AuthTokenStoreTests {
    let directory: String
    let key = SymmetricKey(size: .bits256)

    init() throws {
        directory = NSTemporaryDirectory() + "courier-store-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/tokens.store" }
    let userKey = TokenStoreKey(clientID: "courier-user", level: .user)
    let deviceKey = TokenStoreKey(clientID: "courier-device", level: .device)

    func token(_ name: String) -> OAuth2Token {
        OAuth2Token(
            accessToken: "access-\(name)",
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_600),
            refreshToken: "refresh-\(name)",
            scope: [.read]
        )
    }

    func store(_ key: SymmetricKey? = nil) -> EncryptedFileTokenStore {
        EncryptedFileTokenStore(path: path, keyProvider: .key(key ?? self.key))
    }

    @Test func tokensRoundTripAndTheFileIsEncryptedWithMode0600() async throws {
        try await store().setToken(token("u"), for: userKey)
        try await store().setToken(token("d"), for: deviceKey)
        #expect(try await store().token(for: userKey) == token("u"))
        #expect(try await store().token(for: deviceKey) == token("d"))
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(!String(decoding: bytes, as: UTF8.self).contains("access-u"))
        #expect(!String(decoding: bytes, as: UTF8.self).contains("refresh"))
        #expect(bytes.prefix(4) == Data("CTKS".utf8))
        var info = stat()
        #expect(stat(path, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        // No temporary files are left behind.
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == [
                "tokens.store", "tokens.store.lock",
            ]
        )
    }

    @Test func removingTokensOfOneClientKeepsTheOthers() async throws {
        try await store().setToken(token("u"), for: userKey)
        try await store().setToken(token("i"), for: TokenStoreKey(clientID: "courier-user", level: .implicit))
        try await store().setToken(token("d"), for: deviceKey)
        try await store().removeTokens(clientID: "courier-user")
        #expect(try await store().token(for: userKey) == nil)
        #expect(try await store().token(for: deviceKey) == token("d"))
        try await store().setToken(nil, for: deviceKey)
        #expect(try await store().token(for: deviceKey) == nil)
    }

    @Test func aFlippedByteIsTampering() async throws {
        try await store().setToken(token("u"), for: userKey)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        for index in [20, bytes.count / 2, bytes.count - 1, 14] {  // nonce, ciphertext, tag, length
            var damaged = bytes
            damaged[index] ^= 0x01
            try Data(damaged).write(to: URL(fileURLWithPath: path))
            let error = await #expect(throws: CourierError.self) { try await store().token(for: userKey) }
            #expect(error?.kind == .tokenStoreTampered || (index == 14 && error?.kind == .tokenStoreTruncated))
        }
        bytes.append(0)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        await #expect(throws: CourierError(.tokenStoreTampered)) { try await store().token(for: userKey) }
    }

    @Test func aCutFileIsTruncated() async throws {
        try await store().setToken(token("u"), for: userKey)
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        for length in [0, 3, 10, 30, bytes.count - 1] {
            try bytes.prefix(length).write(to: URL(fileURLWithPath: path))
            await #expect(throws: CourierError(.tokenStoreTruncated)) { try await store().token(for: userKey) }
        }
    }

    @Test func anotherKeyIsWrongKeyAndWritesDoNotOverwrite() async throws {
        try await store().setToken(token("u"), for: userKey)
        let other = store(SymmetricKey(size: .bits256))
        await #expect(throws: CourierError(.tokenStoreWrongKey)) { try await other.token(for: userKey) }
        // A write with the wrong key must not replace the store it cannot read.
        await #expect(throws: CourierError(.tokenStoreWrongKey)) {
            try await other.setToken(token("x"), for: deviceKey)
        }
        #expect(try await store().token(for: userKey) == token("u"))
    }

    @Test func anotherFileIsUnsupportedFormat() async throws {
        try Data("{\"access_token\": \"plain\"}".utf8).write(to: URL(fileURLWithPath: path))
        await #expect(throws: CourierError(.tokenStoreUnsupportedFormat)) { try await store().token(for: userKey) }
    }

    @Test func aVersionWithNoSuccessorIsRefusedNotIncremented() async throws {
        // Sealed with the right key, so only the document itself is wrong: its version is the
        // largest a version can be, and a write would have to go one past it.
        let document =
            #"{"version":1,"entries":[{"key":{"clientID":"c","level":"device"},"#
            + #""token":{"accessToken":"a","tokenType":"Bearer","issuedAt":0,"scope":[],"additionalFields":{}},"#
            + #""version":18446744073709551615}]}"#
        let sealer = TokenSealer(keyProvider: .key(key))
        try sealer.seal(Data(document.utf8), key: key).write(to: URL(fileURLWithPath: path))
        let device = TokenStoreKey(clientID: "c", level: .device)
        let read = await #expect(throws: CourierError(.tokenStoreUnsupportedFormat)) {
            try await store().token(for: device)
        }
        #expect(read?.message.contains("largest value") == true, "\(String(describing: read))")
        await #expect(throws: CourierError(.tokenStoreUnsupportedFormat)) {
            try await store().setToken(token("x"), for: device)
        }
    }

    @Test func aFileLargerThanTheLimitIsRefusedAndLeftAlone() async throws {
        // A sparse file: its size is past the limit without writing 64 MiB.
        #expect(FileManager.default.createFile(atPath: path, contents: Data("CTKS".utf8)))
        let handle = try #require(FileHandle(forWritingAtPath: path))
        try handle.truncate(atOffset: UInt64(EncryptedFileTokenStore.maximumFileBytes + 1))
        try handle.close()
        await #expect(throws: CourierError(.tokenStoreUnsupportedFormat)) { try await store().token(for: userKey) }
        await #expect(throws: CourierError(.tokenStoreUnsupportedFormat)) {
            try await store().setToken(token("x"), for: deviceKey)
        }
        let size = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int
        #expect(size == EncryptedFileTokenStore.maximumFileBytes + 1)
    }

    @Test func concurrentWritersInOneProcessDoNotInterleave() async throws {
        // Many store instances on one path, writing different keys at once: every write lands.
        let path = self.path
        let provider = TokenStoreKeyProvider.key(key)
        let tokens = (0..<64).map { token("\($0)") }
        await withTaskGroup(of: Void.self) { group in
            for index in 0..<64 {
                group.addTask {
                    let key = TokenStoreKey(clientID: "client-\(index)", level: .device)
                    try? await EncryptedFileTokenStore(path: path, keyProvider: provider).setToken(
                        tokens[index],
                        for: key
                    )
                }
            }
        }
        for index in 0..<64 {
            #expect(
                try await store().token(for: TokenStoreKey(clientID: "client-\(index)", level: .device))
                    == token("\(index)")
            )
        }
    }

    @Test func theDefaultKeyFileIsCreatedOnceWithMode0600() async throws {
        let store = EncryptedFileTokenStore(path: path)
        try await store.setToken(token("u"), for: userKey)
        let keyFile = path + ".key"
        var info = stat()
        #expect(stat(keyFile, &info) == 0)
        #expect(info.st_mode & 0o777 == 0o600)
        #expect(info.st_size == 32)
        // A new store instance (a restarted process) reads it with the same key.
        #expect(try await EncryptedFileTokenStore(path: path).token(for: userKey) == token("u"))
        try FileManager.default.removeItem(atPath: keyFile)
        await #expect(throws: CourierError(.tokenStoreWrongKey)) {
            try await EncryptedFileTokenStore(path: path).token(for: userKey)
        }
    }

    @Test func aBrokerOnADamagedStoreFailsWithTheStoresOwnKind() async throws {
        try await store().setToken(token("u"), for: userKey)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count / 2] ^= 0xFF
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, store: store())
        // Not wrapped: the store's kind surfaces, with the level whose token was involved.
        let error = await #expect(throws: CourierError(.tokenStoreTampered)) { try await broker.token() }
        #expect(error?.level == .user)
        #expect(error?.filePath == path)
        // Never a garbage token, and no grant to paper over the damage.
        #expect(grant.calls == 0)
    }

    /// A token store of the app's own that throws an error of its own.
    struct FailingStore: TokenStore {
        struct Failure: Error {}
        func token(for key: TokenStoreKey) async throws -> OAuth2Token? { throw Failure() }
        func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws { throw Failure() }
        func removeTokens(clientID: String) async throws { throw Failure() }
    }

    @Test func aStoreOfYourOwnThatThrowsIsTokenStoreFailed() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device, store: FailingStore())
        let error = await #expect(throws: CourierError(.tokenStoreFailed)) { try await broker.token() }
        #expect(error?.underlying is FailingStore.Failure)
        #expect(error?.level == .device)
        #expect(grant.calls == 0)
    }
}
