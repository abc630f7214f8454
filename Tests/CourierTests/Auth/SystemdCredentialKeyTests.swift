import Crypto
import Foundation
import Testing

@testable import Courier

/// Token-store keys from systemd credentials: `$CREDENTIALS_DIRECTORY/<name>`, here a real
/// directory handed to the provider as its environment, so the test process's own
/// environment is left alone.
@Suite(.timeLimit(.minutes(1)))
struct SystemdCredentialKeyTests {
    let root: String
    let credentials: String
    let key = SymmetricKey(size: .bits256)
    let userKey = TokenStoreKey(clientID: "courier-user", level: .user)

    init() throws {
        root = NSTemporaryDirectory() + "courier-credentials-" + UUID().uuidString
        credentials = root + "/credentials"
        try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true)
    }

    var keyBytes: Data { key.withUnsafeBytes { Data($0) } }

    /// The provider of credential `name` in a process whose environment is `environment`.
    func provider(_ name: String, environment: [String: String]? = nil) -> TokenStoreKeyProvider {
        let environment = environment ?? ["CREDENTIALS_DIRECTORY": credentials, "HOME": "/root"]
        return .systemdCredential(name) { environment }
    }

    func write(_ contents: Data, as name: String) throws {
        try contents.write(to: URL(fileURLWithPath: credentials + "/" + name))
    }

    func bytes(of key: SymmetricKey) -> Data { key.withUnsafeBytes { Data($0) } }

    func unavailable(_ provider: TokenStoreKeyProvider) async -> CourierError? {
        let error = await #expect(throws: CourierError.self) { try await provider.key() }
        #expect(error?.kind == .tokenStoreKeyUnavailable)
        return error
    }

    @Test func rawBytesAndBase64WithOrWithoutALineEndAreTheKey() async throws {
        let base64 = keyBytes.base64EncodedString()
        let forms: [String: Data] = [
            "raw": keyBytes,
            "base64": Data(base64.utf8),
            "base64-lf": Data((base64 + "\n").utf8),
            "base64-crlf": Data((base64 + "\r\n").utf8),
        ]
        for (name, contents) in forms {
            try write(contents, as: name)
            #expect(bytes(of: try await provider(name).key()) == keyBytes, "\(name)")
        }
    }

    @Test func aStoreSealsWithTheCredential() async throws {
        try write(Data((keyBytes.base64EncodedString() + "\n").utf8), as: "tokens")
        let path = root + "/tokens.store"
        let token = OAuth2Token(
            accessToken: "access",
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_600)
        )
        try await EncryptedFileTokenStore(path: path, keyProvider: provider("tokens")).setToken(token, for: userKey)
        // The same key given directly opens it: the credential was the key.
        #expect(try await EncryptedFileTokenStore(path: path, keyProvider: .key(key)).token(for: userKey) == token)
    }

    @Test func withoutTheVariableTheProcessIsNotUnderSystemd() async throws {
        for environment in [["HOME": "/root"], ["CREDENTIALS_DIRECTORY": ""]] {
            let error = await unavailable(provider("tokens", environment: environment))
            #expect(error?.message.contains("not running under systemd with credentials") == true)
        }
    }

    @Test func theProcessEnvironmentIsWhereThePublicProviderLooks() async throws {
        // The test runner does not run under systemd with credentials; where it does, there
        // is nothing to learn here.
        try #require(ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"] == nil)
        let error = await unavailable(.systemdCredential("tokens"))
        #expect(error?.message.contains("CREDENTIALS_DIRECTORY is unset") == true)
    }

    @Test func aMissingCredentialIsNamed() async throws {
        let error = await unavailable(provider("tokens-2026-12"))
        #expect(error?.message.contains("there is no systemd credential \"tokens-2026-12\"") == true)
        #expect(error?.filePath == credentials + "/tokens-2026-12")
    }

    @Test func contentsThatAreNotA256BitKeyAreRefused() async throws {
        let contents: [Data] = [
            Data(),
            Data(keyBytes.prefix(31)),
            keyBytes + Data("\n".utf8),  // raw bytes with a line end: 33 bytes
            Data(SymmetricKey(size: .bits128).withUnsafeBytes { Data($0) }.base64EncodedString().utf8),
            Data((keyBytes.base64EncodedString() + "\n\n").utf8),
            Data((" " + keyBytes.base64EncodedString()).utf8),
            Data(repeating: 0x41, count: 4096),
        ]
        for (index, data) in contents.enumerated() {
            try write(data, as: "bad-\(index)")
            let error = await unavailable(provider("bad-\(index)"))
            #expect(error?.message.contains("is not a 256-bit key") == true, "\(index)")
        }
    }

    @Test func aNameThatLeavesTheDirectoryIsRefused() async throws {
        // A valid key one level up, which a name with ".." would reach.
        try keyBytes.write(to: URL(fileURLWithPath: root + "/outside"))
        try keyBytes.write(to: URL(fileURLWithPath: credentials + "/inside"))
        for name in ["../outside", "..", ".", "", "sub/inside", "/etc/passwd", "a..b", "in\0side"] {
            let error = await unavailable(provider(name))
            #expect(error?.message.contains("must be a plain file name") == true, "\(name)")
        }
        #expect(bytes(of: try await provider("inside").key()) == keyBytes)
    }

    @Test func aRotationBetweenCredentialsSurvivesTheOldOnesRemoval() async throws {
        let old = SymmetricKey(size: .bits256)
        try bytes(of: old).write(to: URL(fileURLWithPath: credentials + "/tokens-2026-11"))
        try write(keyBytes, as: "tokens-2026-12")
        let path = root + "/tokens.store"
        let token = OAuth2Token(
            accessToken: "access",
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_600)
        )
        try await EncryptedFileTokenStore(path: path, keyProvider: provider("tokens-2026-11")).setToken(
            token,
            for: userKey
        )

        let rotating = EncryptedFileTokenStore(
            path: path,
            keyProvider: provider("tokens-2026-12").accepting(provider("tokens-2026-11"))
        )
        #expect(try await rotating.resealEntries() == 1)
        // The unit no longer loads the old credential; a store still naming it keeps working.
        try FileManager.default.removeItem(atPath: credentials + "/tokens-2026-11")
        let afterRemoval = EncryptedFileTokenStore(
            path: path,
            keyProvider: provider("tokens-2026-12").accepting(provider("tokens-2026-11"))
        )
        #expect(try await afterRemoval.token(for: userKey) == token)
    }
}
