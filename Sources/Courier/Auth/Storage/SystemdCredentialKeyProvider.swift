import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension TokenStoreKeyProvider {
    /// A key that systemd hands the service as a credential: the file `name` in the directory
    /// named by `$CREDENTIALS_DIRECTORY`.
    ///
    /// systemd fills that directory from the unit's `LoadCredential=`,
    /// `LoadCredentialEncrypted=` (a credential sealed with `systemd-creds encrypt`, by the
    /// host's TPM2 or its credential secret) and `SetCredential=`; only the service's user can
    /// read it, and it lives in memory, never on disk:
    ///
    /// ```ini
    /// [Service]
    /// LoadCredentialEncrypted=tokens-2026-12:/etc/credstore.encrypted/tokens-2026-12
    /// ```
    ///
    /// ```swift
    /// let store = EncryptedFileTokenStore(
    ///     path: "/var/lib/my-service/tokens.store",
    ///     keyProvider: .systemdCredential("tokens-2026-12")
    /// )
    /// ```
    ///
    /// The credential holds either exactly 32 bytes, the key itself, or the 32 bytes in
    /// standard base64 with padding (44 characters, as `openssl rand -base64 32` writes them),
    /// optionally followed by one line feed (or carriage return and line feed). Nothing else is
    /// read as a key.
    ///
    /// The key is read when a store first needs it, and errors are
    /// ``CourierError/Kind/tokenStoreKeyUnavailable``: when `$CREDENTIALS_DIRECTORY` is unset
    /// (the process does not run under systemd with credentials), when there is no credential
    /// `name` or it cannot be read, when it does not hold a 256-bit key, and for a `name`
    /// that is not a plain file name (empty, `.`, or containing `/`, `..` or NUL).
    ///
    /// - Parameter name: The credential's name, as the unit's `LoadCredential=` gives it.
    /// - Returns: The provider.
    public static func systemdCredential(_ name: String) -> TokenStoreKeyProvider {
        systemdCredential(name) { ProcessInfo.processInfo.environment }
    }

    /// A key that systemd hands the service as a credential, with `environment` standing for
    /// the process's environment (tests give a directory without changing the process's).
    ///
    /// - Parameters:
    ///   - name: The credential's name.
    ///   - environment: Returns the environment `CREDENTIALS_DIRECTORY` is read from.
    /// - Returns: The provider.
    static func systemdCredential(
        _ name: String,
        environment: @escaping @Sendable () -> [String: String]
    ) -> TokenStoreKeyProvider {
        let source = SystemdCredentialKeyProvider(name: name, environment: environment)
        return TokenStoreKeyProvider { try await source.key() }
    }
}

/// A key from a systemd credential: `$CREDENTIALS_DIRECTORY/<name>`, 32 raw bytes or 32 bytes
/// in base64.
struct SystemdCredentialKeyProvider: Sendable {
    /// The variable systemd sets to the directory of the service's credentials.
    static let directoryVariable = "CREDENTIALS_DIRECTORY"
    /// More than any valid credential holds (44 base64 characters and a CR LF): a larger file
    /// is refused without being read whole.
    static let readLimit = 64

    /// The credential's name.
    let name: String
    /// Returns the environment the directory is read from.
    let environment: @Sendable () -> [String: String]

    /// Reads and decodes the credential.
    ///
    /// - Throws: ``CourierError/Kind/tokenStoreKeyUnavailable`` when the name is not a plain
    ///   file name, the variable is unset, the file is missing or unreadable, or it does not
    ///   hold a 256-bit key.
    func key() async throws -> SymmetricKey {
        guard Self.isPlainFileName(name) else {
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: "the systemd credential name \"\(name)\" must be a plain file name (no \"/\", \"..\" or NUL)"
            )
        }
        guard let directory = environment()[Self.directoryVariable], !directory.isEmpty else {
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: "the token store key is the systemd credential \"\(name)\", but \(Self.directoryVariable) "
                    + "is unset: the process is not running under systemd with credentials "
                    + "(give the unit LoadCredential=\(name):… or LoadCredentialEncrypted=\(name):…)"
            )
        }
        let path = directory.hasSuffix("/") ? directory + name : directory + "/" + name
        let contents = try Self.contents(ofFile: path, name: name)
        guard let key = Self.decodedKey(contents) else {
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: "the systemd credential \"\(name)\" is not a 256-bit key: it must hold 32 bytes, "
                    + "or 32 bytes in base64",
                path: path
            )
        }
        return key
    }

    /// Whether `name` names a file in the credentials directory and nothing else.
    static func isPlainFileName(_ name: String) -> Bool {
        !name.isEmpty && name != "." && !name.contains("/") && !name.contains("..") && !name.contains("\0")
    }

    /// The key in `contents`: 32 raw bytes, or 32 bytes in padded base64 with at most one
    /// line ending after it.
    static func decodedKey(_ contents: [UInt8]) -> SymmetricKey? {
        if contents.count == 32 { return SymmetricKey(data: contents) }
        var text = contents[...]
        if text.last == UInt8(ascii: "\n") {
            text = text.dropLast()
            if text.last == UInt8(ascii: "\r") { text = text.dropLast() }
        }
        guard let decoded = Data(base64Encoded: Data(text)), decoded.count == 32 else { return nil }
        return SymmetricKey(data: decoded)
    }

    /// The first ``readLimit`` bytes of the file at `path` and one more, if there is one.
    private static func contents(ofFile path: String, name: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let reason = errno
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: reason == ENOENT
                    ? "there is no systemd credential \"\(name)\": give the unit LoadCredential=\(name):… "
                        + "or LoadCredentialEncrypted=\(name):…"
                    : "cannot open the systemd credential \"\(name)\": \(String(cString: strerror(reason)))",
                path: path
            )
        }
        defer { close(fd) }
        var contents: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: readLimit + 1)
        while contents.count <= readLimit {
            let wanted = readLimit + 1 - contents.count
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, wanted) }
            if count < 0 {
                if errno == EINTR { continue }
                throw CourierError(
                    kind: .tokenStoreKeyUnavailable,
                    message: "cannot read the systemd credential \"\(name)\": \(String(cString: strerror(errno)))",
                    path: path
                )
            }
            if count == 0 { break }
            contents += buffer[0..<count]
        }
        return contents
    }
}
