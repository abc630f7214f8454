public import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Supplies the 256-bit key an ``EncryptedFileTokenStore`` encrypts with, and the keys it
/// also opens tokens with while the key is being changed.
///
/// The key is asked for once per store and kept in memory. Courier ships a key file
/// (``keyFile(atPath:)``, the default), a systemd credential (``systemdCredential(_:)``), an
/// environment variable (``environment(_:)``) and a fixed key (``key(_:)``). In production,
/// give a closure over your secret manager or hardware key store:
///
/// ```swift
/// let store = EncryptedFileTokenStore(
///     path: "/var/lib/my-service/tokens.store",
///     keyProvider: TokenStoreKeyProvider { try await secrets.symmetricKey(named: "token-store") }
/// )
/// ```
///
/// To change the key, name the keys a store should still open with ``accepting(_:)``:
///
/// ```swift
/// let keys = TokenStoreKeyProvider.systemdCredential("tokens-2026-12")
///     .accepting(.systemdCredential("tokens-2026-11"))
/// ```
public struct TokenStoreKeyProvider: Sendable {
    private let body: @Sendable () async throws -> SymmetricKey
    /// The providers of the keys tokens are also opened with, each without accepted keys of
    /// its own (``accepting(_:)`` flattens them).
    let acceptedProviders: [TokenStoreKeyProvider]

    /// A provider that asks `body` for the key.
    ///
    /// - Parameter body: Returns a 256-bit key. A ``CourierError`` it throws is reported as it
    ///   is; any other error as ``CourierError/Kind/tokenStoreKeyUnavailable``.
    public init(_ body: @escaping @Sendable () async throws -> SymmetricKey) {
        self.body = body
        self.acceptedProviders = []
    }

    /// A provider with `body` for the key and `acceptedProviders` for the others.
    private init(
        body: @escaping @Sendable () async throws -> SymmetricKey,
        acceptedProviders: [TokenStoreKeyProvider]
    ) {
        self.body = body
        self.acceptedProviders = acceptedProviders
    }

    /// The key.
    ///
    /// - Returns: The key.
    /// - Throws: What the provider throws.
    public func key() async throws -> SymmetricKey { try await body() }

    /// This provider's key, which seals everything written, with the keys of `others`
    /// accepted too: a token sealed under one of them still opens, and is sealed again under
    /// this provider's key when it is next written.
    ///
    /// This is how a key is changed without losing the tokens sealed under the old one. Make
    /// the new key current and accept the old one:
    ///
    /// ```swift
    /// let keys = TokenStoreKeyProvider.systemdCredential("tokens-2026-12")
    ///     .accepting(.systemdCredential("tokens-2026-11"))
    /// ```
    ///
    /// The accepted key may also be the *next* one: a fleet first gives every process the new
    /// key as an accepted key, so that processes still sealing with the old key read what the
    /// first process to seal with the new key writes (see
    /// <doc:Authentication#Rotate-the-key>).
    ///
    /// A store asks for the accepted keys once, with its key, and keeps them in memory. An
    /// accepted key that cannot be loaded does not stop the store: tokens sealed under its key
    /// still open, and a token sealed under a key the store does not hold throws
    /// ``CourierError/Kind/tokenStoreWrongKey`` (whose message says which accepted keys could
    /// not be loaded; the store asks for those again after such a failure). A provider given
    /// here brings the keys it accepts too.
    ///
    /// - Parameter others: The providers of the keys to accept.
    /// - Returns: A provider with this provider's key and the accepted keys of both.
    public func accepting(_ others: TokenStoreKeyProvider...) -> TokenStoreKeyProvider {
        let added = others.flatMap { other in
            [TokenStoreKeyProvider(body: other.body, acceptedProviders: [])] + other.acceptedProviders
        }
        return TokenStoreKeyProvider(body: body, acceptedProviders: acceptedProviders + added)
    }

    /// A fixed key, for tests and for services that obtain the key themselves.
    ///
    /// - Parameter key: The key; it must be 256 bits.
    /// - Returns: The provider.
    public static func key(_ key: SymmetricKey) -> TokenStoreKeyProvider {
        let source = StaticKeyProvider(key: key)
        return TokenStoreKeyProvider { try await source.key() }
    }

    /// A key from an environment variable holding 32 bytes in base64.
    ///
    /// - Parameter variable: The variable's name, `COURIER_TOKEN_STORE_KEY` by default.
    /// - Returns: The provider.
    public static func environment(_ variable: String = "COURIER_TOKEN_STORE_KEY") -> TokenStoreKeyProvider {
        let source = EnvironmentKeyProvider(variable: variable)
        return TokenStoreKeyProvider { try await source.key() }
    }

    /// A key in a file of its own, created with 32 random bytes and mode 0600 when missing.
    ///
    /// This is the default of ``EncryptedFileTokenStore``: the key lives next to the store, in
    /// `<store path>.key`. It keeps tokens safe when the store file alone travels (a backup,
    /// a support bundle, a log collector), and makes tampering detectable; it does not protect
    /// against someone who can read every file of the host. Keep the key elsewhere — a secret
    /// manager, a mounted secret, another volume — when that matters.
    ///
    /// - Parameter path: The key file.
    /// - Returns: The provider.
    public static func keyFile(atPath path: String) -> TokenStoreKeyProvider {
        let source = KeyFileProvider(path: path)
        return TokenStoreKeyProvider { try await source.key() }
    }
}

/// A fixed key, for tests and for apps that obtain the key themselves.
struct StaticKeyProvider {
    // The bytes rather than the `SymmetricKey`, which is not `Sendable` in every swift-crypto.
    private let bytes: [UInt8]

    /// Creates a provider.
    ///
    /// - Parameter key: The key; it must be 256 bits.
    init(key: SymmetricKey) { self.bytes = key.withUnsafeBytes { Array($0) } }

    /// The key.
    func key() async throws -> SymmetricKey { SymmetricKey(data: bytes) }
}

/// A key from an environment variable holding 32 bytes in base64.
struct EnvironmentKeyProvider {
    /// The variable's name.
    let variable: String

    /// Creates a provider.
    ///
    /// - Parameter variable: The variable's name, `COURIER_TOKEN_STORE_KEY` by default.
    init(variable: String = "COURIER_TOKEN_STORE_KEY") { self.variable = variable }

    /// Reads and decodes the variable.
    ///
    /// - Throws: ``CourierError/Kind/tokenStoreKeyUnavailable`` when it is unset or not 32 bytes.
    func key() async throws -> SymmetricKey {
        guard let text = ProcessInfo.processInfo.environment[variable], let data = Data(base64Encoded: text),
            data.count == 32
        else {
            throw CourierError(kind: .tokenStoreKeyUnavailable, message: "\(variable) must hold 32 bytes in base64")
        }
        return SymmetricKey(data: data)
    }
}

/// A key in a file of its own, created with 32 random bytes and mode 0600 when missing.
///
/// This is the default of ``EncryptedFileTokenStore``: the key lives next to the store, in
/// `<store path>.key`. It keeps tokens safe when the store file alone travels (a backup,
/// a support bundle, a log collector), and makes tampering detectable; it does not protect
/// against someone who can read every file of the user. Keep the key elsewhere — a secret
/// manager, a mounted secret, another volume — when that matters.
struct KeyFileProvider {
    /// The key file.
    let path: String

    /// Creates a provider.
    ///
    /// - Parameter path: The key file.
    init(path: String) { self.path = path }

    /// Reads the key, creating the file first when it does not exist.
    ///
    /// - Throws: ``CourierError/Kind/tokenStoreKeyUnavailable`` when the file cannot be created or
    ///   read, or does not hold 32 bytes.
    func key() async throws -> SymmetricKey {
        if let data = FileManager.default.contents(atPath: path) {
            return try Self.validated(data, path: path)
        }
        // Write a temporary file and hard-link it into place: the key file appears complete
        // or not at all, and of two processes creating it at once, one wins and both use its key.
        let fresh = SymmetricKey(size: .bits256)
        let bytes = fresh.withUnsafeBytes { Data($0) }
        let temporary = path + ".tmp-" + OAuth2Form.base64URL(OAuth2Form.randomBytes(6))
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: "cannot create the key file: \(Self.errnoText())",
                path: path
            )
        }
        defer { unlink(temporary) }
        _ = fchmod(fd, 0o600)
        let written = bytes.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        let synced = written == bytes.count && fsync(fd) == 0
        close(fd)
        guard synced else {
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: "cannot write the key file: \(Self.errnoText())",
                path: path
            )
        }
        if link(temporary, path) != 0 {
            guard errno == EEXIST, let data = FileManager.default.contents(atPath: path) else {
                throw CourierError(
                    kind: .tokenStoreKeyUnavailable,
                    message: "cannot create the key file: \(Self.errnoText())",
                    path: path
                )
            }
            return try Self.validated(data, path: path)
        }
        return fresh
    }

    private static func errnoText() -> String { String(cString: strerror(errno)) }

    private static func validated(_ data: Data, path: String) throws -> SymmetricKey {
        guard data.count == 32 else {
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: "the key file must hold exactly 32 bytes",
                path: path
            )
        }
        return SymmetricKey(data: data)
    }
}
