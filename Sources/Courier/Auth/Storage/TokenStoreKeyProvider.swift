public import Crypto
import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Supplies the 256-bit key an ``EncryptedFileTokenStore`` encrypts with.
///
/// The key is asked for once per store and kept in memory. Courier ships a key file
/// (``KeyFileProvider``, the default), an environment variable
/// (``EnvironmentKeyProvider``) and a fixed key (``StaticKeyProvider``). In production,
/// implement this protocol over your secret manager or hardware key store.
public protocol TokenStoreKeyProvider: Sendable {
    /// The key.
    ///
    /// - Returns: A 256-bit key.
    /// - Throws: Any error; the store reports it as ``CourierError/Kind/keyUnavailable``.
    func key() async throws -> SymmetricKey
}

/// A fixed key, for tests and for apps that obtain the key themselves.
public struct StaticKeyProvider: TokenStoreKeyProvider {
    // The bytes rather than the `SymmetricKey`, which is not `Sendable` in every swift-crypto.
    private let bytes: [UInt8]

    /// Creates a provider.
    ///
    /// - Parameter key: The key; it must be 256 bits.
    public init(key: SymmetricKey) { self.bytes = key.withUnsafeBytes { Array($0) } }

    /// The key.
    public func key() async throws -> SymmetricKey { SymmetricKey(data: bytes) }
}

/// A key from an environment variable holding 32 bytes in base64.
public struct EnvironmentKeyProvider: TokenStoreKeyProvider {
    /// The variable's name.
    public let variable: String

    /// Creates a provider.
    ///
    /// - Parameter variable: The variable's name, `COURIER_TOKEN_STORE_KEY` by default.
    public init(variable: String = "COURIER_TOKEN_STORE_KEY") { self.variable = variable }

    /// Reads and decodes the variable.
    ///
    /// - Throws: ``CourierError/Kind/keyUnavailable`` when it is unset or not 32 bytes.
    public func key() async throws -> SymmetricKey {
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
public struct KeyFileProvider: TokenStoreKeyProvider {
    /// The key file.
    public let path: String

    /// Creates a provider.
    ///
    /// - Parameter path: The key file.
    public init(path: String) { self.path = path }

    /// Reads the key, creating the file first when it does not exist.
    ///
    /// - Throws: ``CourierError/Kind/keyUnavailable`` when the file cannot be created or
    ///   read, or does not hold 32 bytes.
    public func key() async throws -> SymmetricKey {
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
            throw CourierError(kind: .tokenStoreKeyUnavailable,
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
            throw CourierError(kind: .tokenStoreKeyUnavailable,
                message: "cannot write the key file: \(Self.errnoText())",
                path: path
            )
        }
        if link(temporary, path) != 0 {
            guard errno == EEXIST, let data = FileManager.default.contents(atPath: path) else {
                throw CourierError(kind: .tokenStoreKeyUnavailable,
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
            throw CourierError(kind: .tokenStoreKeyUnavailable, message: "the key file must hold exactly 32 bytes", path: path)
        }
        return SymmetricKey(data: data)
    }
}
