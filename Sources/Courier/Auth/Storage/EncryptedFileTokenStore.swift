import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tokens in one file, encrypted and authenticated with AES-256-GCM.
///
/// - **Encryption.** The whole store — every client and level — is one JSON document,
///   sealed with AES-256-GCM under the key from a ``TokenStoreKeyProvider`` with a fresh
///   random nonce per write. The file's header is authenticated too.
/// - **Damage is an error.** A file that was changed, cut short or written with another key
///   throws ``CourierError`` (``CourierError/Kind/tokenStoreTampered``,
///   ``CourierError/Kind/tokenStoreTruncated``, ``CourierError/Kind/tokenStoreWrongKey``); it is never
///   read as a token, and never silently replaced.
/// - **Atomic writes.** A write goes to a temporary file in the same directory (mode 0600),
///   is flushed with `fsync`, and is renamed over the store; the directory is synced after.
///   A crash leaves the old store or the new one.
/// - **No interleaving.** Each read-modify-write holds a lock per path that all stores of
///   the process share, and an advisory `flock` on `<path>.lock` against other processes.
///
/// ### File format (version 1)
///
/// `"CTKS"`, version byte `1`, 8-byte key id (the first bytes of HMAC-SHA-256 of a fixed
/// label under the key, so a wrong key is told apart from tampering), 4-byte big-endian
/// ciphertext length, 12-byte nonce, ciphertext, 16-byte tag. The first 17 bytes are the
/// associated data.
///
/// ```swift
/// let store = EncryptedFileTokenStore(path: "/var/lib/myapp/tokens.store")   // key in tokens.store.key
/// let store = EncryptedFileTokenStore(path: path, keyProvider: .environment())
/// ```
public final class EncryptedFileTokenStore: TokenStore {
    /// The store's file.
    public let path: String
    private let sealer: TokenSealer

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - path: The store's file; its directory must exist.
    ///   - keyProvider: The key; by default ``TokenStoreKeyProvider/keyFile(atPath:)`` at `<path>.key`.
    public init(path: String, keyProvider: TokenStoreKeyProvider? = nil) {
        self.path = path
        self.sealer = TokenSealer(keyProvider: keyProvider ?? .keyFile(atPath: path + ".key"), location: path)
    }

    /// The token under `key`.
    ///
    /// - Throws: ``CourierError`` when the file is damaged, written with another key, or
    ///   cannot be read.
    public func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
        let symmetricKey = try await encryptionKey()
        return try PathLock.withLock(path) {
            try readDocument(symmetricKey).entries.first(where: { $0.key == key })?.token
        }
    }

    /// Stores or removes the token under `key`, rewriting the file atomically.
    ///
    /// - Throws: ``CourierError`` when the existing file is damaged or cannot be written.
    public func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
        let symmetricKey = try await encryptionKey()
        try PathLock.withLock(path) {
            var document = try readDocument(symmetricKey)
            document.entries.removeAll { $0.key == key }
            if let token { document.entries.append(.init(key: key, token: token)) }
            try writeDocument(document, symmetricKey)
        }
    }

    /// Removes every token of the client.
    public func removeTokens(clientID: String) async throws {
        let symmetricKey = try await encryptionKey()
        try PathLock.withLock(path) {
            var document = try readDocument(symmetricKey)
            document.entries.removeAll { $0.key.clientID == clientID }
            try writeDocument(document, symmetricKey)
        }
    }

    // MARK: Document

    struct Document: Codable {
        struct Entry: Codable {
            var key: TokenStoreKey
            var token: OAuth2Token
        }
        var version = 1
        var entries: [Entry] = []
    }

    private func encryptionKey() async throws -> SymmetricKey {
        try await sealer.key()
    }

    /// Reads and decrypts the file; an absent file is an empty document.
    private func readDocument(_ key: SymmetricKey) throws -> Document {
        guard let data = try readFile() else { return Document() }
        let plaintext = try sealer.open(data, key: key)
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            return try decoder.decode(Document.self, from: plaintext)
        } catch {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "the decrypted store does not decode",
                path: path
            )
        }
    }

    private func writeDocument(_ document: Document, _ key: SymmetricKey) throws {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        let plaintext: Data
        do {
            plaintext = try encoder.encode(document)
        } catch {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "the tokens do not encode: \(error)",
                path: path
            )
        }
        try writeAtomically(try sealer.seal(plaintext, key: key))
    }

    // MARK: Files

    private func readFile() throws -> Data? {
        let fd = posixOpen(path, O_RDONLY | O_CLOEXEC)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw ioError("cannot open the store")
        }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw ioError("cannot read the store")
            }
            if count == 0 { break }
            data.append(contentsOf: buffer[0..<count])
        }
        return data
    }

    private func writeAtomically(_ data: Data) throws {
        let directory = (path as NSString).deletingLastPathComponent
        let name = (path as NSString).lastPathComponent
        let temporary =
            (directory.isEmpty ? "" : directory + "/") + ".\(name).tmp-"
            + OAuth2Form.base64URL(OAuth2Form.randomBytes(6))
        let fd = posixOpen(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw ioError("cannot create a temporary file") }
        var renamed = false
        defer { if !renamed { unlink(temporary) } }
        _ = fchmod(fd, 0o600)
        var offset = 0
        let failed = data.withUnsafeBytes { raw -> Bool in
            while offset < raw.count {
                let count = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if count < 0 {
                    if errno == EINTR { continue }
                    return true
                }
                offset += count
            }
            return false
        }
        if failed || fsync(fd) != 0 {
            let error = ioError("cannot write the store")
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw ioError("cannot close the store") }
        guard rename(temporary, path) == 0 else { throw ioError("cannot replace the store") }
        renamed = true
        let directoryFD = posixOpen(directory.isEmpty ? "." : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directoryFD >= 0 {
            _ = fsync(directoryFD)
            close(directoryFD)
        }
    }

    private func ioError(_ what: String) -> CourierError {
        CourierError(kind: .tokenStoreIOFailure, message: "\(what): \(String(cString: strerror(errno)))", path: path)
    }
}

/// A lock per file path, shared by every store of the process, plus an advisory `flock` on
/// `<path>.lock` for other processes. Held only around synchronous file work.
enum PathLock {
    private final class Entry: Sendable {
        // Counts critical sections. Not `Void`: a zero-sized value shares its address with the
        // box's mutex pointer, which ThreadSanitizer then reports as a race.
        let lock = LockedBox<UInt64>(0)
    }

    private static let entries = LockedBox<[String: Entry]>([:])

    static func withLock<Result>(_ path: String, _ body: () throws -> Result) throws -> Result {
        let canonical = (path as NSString).standardizingPath
        let entry = entries.withLock { entries -> Entry in
            if let entry = entries[canonical] { return entry }
            let entry = Entry()
            entries[canonical] = entry
            return entry
        }
        return try entry.lock.withLock { sections in
            sections &+= 1
            let fd = posixOpen(canonical + ".lock", O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            if fd >= 0 {
                while flock(fd, LOCK_EX) != 0 && errno == EINTR {}
            }
            defer {
                if fd >= 0 {
                    flock(fd, LOCK_UN)
                    close(fd)
                }
            }
            return try body()
        }
    }
}

/// `open(2)`, named apart from the store's methods.
private func posixOpen(_ path: String, _ flags: Int32, _ mode: mode_t = 0) -> Int32 {
    open(path, flags, mode)
}
