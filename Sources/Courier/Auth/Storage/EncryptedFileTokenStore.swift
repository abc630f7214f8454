import Crypto
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tokens in one file, encrypted and authenticated with AES-256-GCM: the store for a handful of
/// identities — a command-line tool, a device.
///
/// Every call reads the whole file and every write rewrites it, so a service that acts for
/// many users keeps their tokens in `SQLiteTokenStore` (library `CourierSQLite`), one row per
/// token, instead; its `importEntries(fromFileStoreAt:keyProvider:)` moves a file store's
/// tokens there.
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
/// - **Key changes.** A provider that accepts other keys
///   (``TokenStoreKeyProvider/accepting(_:)``) opens a file sealed under one of them, and the
///   next write — of any entry — seals the whole file under the provider's own key again;
///   ``resealEntries()`` does that at once.
/// - **Shared by the processes of one host.** Every entry has a version, and a
///   compare-and-swap write checks it under that lock; a lease is a `flock` on a file of its
///   own, so the processes of a service renew each token once between them (see
///   ``SharedTokenStore``). The kernel drops a dead holder's lease. Across hosts, use a
///   database store.
///
/// ### File format (version 1)
///
/// `"CTKS"`, version byte `1`, 8-byte key id (the first bytes of HMAC-SHA-256 of a fixed
/// label under the key, so a wrong key is told apart from tampering), 4-byte big-endian
/// ciphertext length, 12-byte nonce, ciphertext, 16-byte tag. The first 17 bytes are the
/// associated data. The plaintext is a JSON document of entries (key, token, version) and
/// the versions of removed entries; files written before entries had versions read as
/// version 1, and older readers ignore the versions.
///
/// A store file larger than ``maximumFileBytes`` is refused with
/// ``CourierError/Kind/tokenStoreUnsupportedFormat`` before it is read into memory.
///
/// ```swift
/// let store = EncryptedFileTokenStore(path: "/var/lib/myapp/tokens.store")   // key in tokens.store.key
/// let store = EncryptedFileTokenStore(path: path, keyProvider: .environment())
/// ```
public final class EncryptedFileTokenStore: SharedTokenStore {
    /// The largest store file Courier reads: 64 MiB, room for about 30,000 users' tokens.
    ///
    /// A larger file is not a store Courier wrote for any real service, and reading it
    /// would hold all of it in memory, so it is refused with
    /// ``CourierError/Kind/tokenStoreUnsupportedFormat``.
    public static let maximumFileBytes = 64 << 20

    /// The store's file.
    public let path: String
    private let sealer: TokenSealer
    private let leases: FileLeases

    /// Creates a store.
    ///
    /// - Parameters:
    ///   - path: The store's file; its directory must exist.
    ///   - keyProvider: The key; by default ``TokenStoreKeyProvider/keyFile(atPath:)`` at `<path>.key`.
    public init(path: String, keyProvider: TokenStoreKeyProvider? = nil) {
        self.path = path
        self.sealer = TokenSealer(keyProvider: keyProvider ?? .keyFile(atPath: path + ".key"), location: path)
        self.leases = FileLeases(storePath: path)
    }

    /// The token under `key`.
    ///
    /// - Throws: ``CourierError`` when the file is damaged, written with another key, or
    ///   cannot be read.
    public func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
        try await entry(for: key).token
    }

    /// Stores or removes the token under `key`, rewriting the file atomically; the entry's
    /// version goes up.
    ///
    /// - Throws: ``CourierError`` when the existing file is damaged or cannot be written.
    public func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
        let symmetricKey = try await encryptionKey()
        try PathLock.withLock(path) {
            var document = try readDocument(symmetricKey)
            document.set(token, for: key)
            try writeDocument(document, symmetricKey)
        }
    }

    /// Removes every token of the client; each removed entry's version goes up.
    public func removeTokens(clientID: String) async throws {
        try await removeEntries { $0.clientID == clientID }
    }

    /// Removes every token of one user of the client; each removed entry's version goes up.
    public func removeTokens(clientID: String, user: String?) async throws {
        try await removeEntries { $0.clientID == clientID && $0.user == user }
    }

    private func removeEntries(where matches: (TokenStoreKey) -> Bool) async throws {
        let symmetricKey = try await encryptionKey()
        try PathLock.withLock(path) {
            var document = try readDocument(symmetricKey)
            for key in document.entries.map(\.key) where matches(key) {
                document.set(nil, for: key)
            }
            try writeDocument(document, symmetricKey)
        }
    }

    /// Seals the file again under the provider's own key when it was sealed under an
    /// accepted one (``TokenStoreKeyProvider/accepting(_:)``), so that the old key can be
    /// dropped; entries and their versions do not change.
    ///
    /// Any write does the same, since the file is sealed whole; this is for finishing a change
    /// of key without waiting for one.
    ///
    /// - Returns: How many entries were sealed again: all of them, or 0 when the file was
    ///   already under the key (or does not exist).
    /// - Throws: ``CourierError`` when the file is damaged, sealed under a key the provider does
    ///   not hold, or cannot be written.
    @discardableResult
    public func resealEntries() async throws -> Int {
        let symmetricKey = try await encryptionKey()
        return try PathLock.withLock(path) {
            guard let data = try readFile(), !sealer.isSealed(data, under: symmetricKey) else { return 0 }
            let document = try decodeDocument(data, symmetricKey)
            try writeDocument(document, symmetricKey)
            return document.entries.count
        }
    }

    // MARK: Shared

    /// The entry under `key` with its version. A token written before entries had versions
    /// reads as version 1.
    ///
    /// - Throws: ``CourierError`` when the file is damaged, written with another key, or
    ///   cannot be read.
    public func entry(for key: TokenStoreKey) async throws -> TokenStoreEntry {
        let symmetricKey = try await encryptionKey()
        return try PathLock.withLock(path) { try readDocument(symmetricKey).entry(for: key) }
    }

    /// Writes `token` under `key` (`nil` removes it) when the entry is still at `version`,
    /// with the file locked against the other processes between the check and the write.
    ///
    /// - Throws: ``CourierError`` when the existing file is damaged or cannot be written.
    public func setToken(
        _ token: OAuth2Token?,
        for key: TokenStoreKey,
        ifVersion version: UInt64
    ) async throws
        -> TokenStoreEntry?
    {
        let symmetricKey = try await encryptionKey()
        return try PathLock.withLock(path) {
            var document = try readDocument(symmetricKey)
            guard document.entry(for: key).version == version else { return nil }
            let written = document.set(token, for: key)
            try writeDocument(document, symmetricKey)
            return written
        }
    }

    /// Takes the lease on `key`: an exclusive `flock` on `<path>.lease.<hash of the key>`,
    /// held by an open descriptor until ``releaseLease(_:)``, with the lease's expiry written
    /// in the file.
    ///
    /// When the holder's process ends — even killed — the kernel drops its lock, and the next
    /// process takes the lease at once. A holder that is alive but stuck past its expiry is
    /// replaced: its lease file is unlinked (its lock stays on the old file) and a new one is
    /// locked. Lease files hold no secret.
    ///
    /// - Throws: ``CourierError`` when the lease file cannot be opened or written.
    public func acquireLease(for key: TokenStoreKey, duration: Duration) async throws -> TokenStoreLease? {
        try PathLock.withLock(path) { try leases.acquire(for: key, duration: duration) }
    }

    /// Ends a lease this store took: unlocks and closes its lease file. A lease that was
    /// replaced after it timed out, or that another store instance took, is left alone.
    public func releaseLease(_ lease: TokenStoreLease) async throws {
        try PathLock.withLock(path) { leases.release(lease) }
    }

    // MARK: Document

    struct Document: Codable {
        struct Entry: Codable {
            var key: TokenStoreKey
            var token: OAuth2Token
            /// Absent in files written before entries had versions: read as 1.
            var version: UInt64?
        }
        /// The version of a removed entry, so that it never goes back.
        struct Removal: Codable {
            var key: TokenStoreKey
            var version: UInt64
        }
        var version = 1
        var entries: [Entry] = []
        /// Absent in files written before entries had versions. Readers that predate it
        /// ignore it, so the format stays version 1.
        var removed: [Removal]? = nil

        /// Whether every version has a successor, so that ``set(_:for:)`` can go one up.
        var isWritable: Bool {
            entries.allSatisfy { ($0.version ?? 1) < .max } && (removed ?? []).allSatisfy { $0.version < .max }
        }

        func entry(for key: TokenStoreKey) -> TokenStoreEntry {
            if let entry = entries.first(where: { $0.key == key }) {
                return TokenStoreEntry(token: entry.token, version: entry.version ?? 1)
            }
            let removal = removed?.first(where: { $0.key == key })
            return TokenStoreEntry(token: nil, version: removal?.version ?? 0)
        }

        /// Replaces the entry under `key`, one version up.
        @discardableResult
        mutating func set(_ token: OAuth2Token?, for key: TokenStoreKey) -> TokenStoreEntry {
            let next = entry(for: key).version + 1
            entries.removeAll { $0.key == key }
            var removals = removed ?? []
            removals.removeAll { $0.key == key }
            if let token {
                entries.append(Entry(key: key, token: token, version: next))
            } else {
                removals.append(Removal(key: key, version: next))
            }
            removed = removals.isEmpty ? nil : removals
            return TokenStoreEntry(token: token, version: next)
        }
    }

    private func encryptionKey() async throws -> SymmetricKey {
        try await sealer.key()
    }

    /// Reads and decrypts the file; an absent file is an empty document.
    private func readDocument(_ key: SymmetricKey) throws -> Document {
        guard let data = try readFile() else { return Document() }
        return try decodeDocument(data, key)
    }

    /// Opens and decodes the file's bytes.
    private func decodeDocument(_ data: Data, _ key: SymmetricKey) throws -> Document {
        let plaintext = try sealer.open(data, key: key)
        let document: Document
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            document = try decoder.decode(Document.self, from: plaintext)
        } catch {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "the decrypted store does not decode",
                path: path
            )
        }
        // A version with no successor cannot be written over: no store Courier wrote gets there.
        guard document.isWritable else {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "the store has an entry version at its largest value",
                path: path
            )
        }
        return document
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
            guard data.count + count <= Self.maximumFileBytes else {
                throw CourierError(
                    kind: .tokenStoreUnsupportedFormat,
                    message: "the store is larger than \(Self.maximumFileBytes >> 20) MiB",
                    path: path
                )
            }
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

extension EncryptedFileTokenStore {
    /// Every entry of the file with its version, removals included (with no token), for
    /// moving the tokens to another store.
    ///
    /// The key is asked for now; the file is read when the returned closure is called, which
    /// blocks on the file lock and the disk: call it off Swift's cooperative pool.
    ///
    /// - Returns: A closure that reads the file; it throws as ``entry(for:)`` does.
    /// - Throws: ``CourierError/Kind/tokenStoreKeyUnavailable`` when the key cannot be had.
    package func entriesReader() async throws -> @Sendable () throws -> [TokenStoreKey: TokenStoreEntry] {
        // The bytes rather than the `SymmetricKey`, which is not `Sendable` in every swift-crypto.
        let bytes = try await encryptionKey().withUnsafeBytes { Array($0) }
        return { [self] in
            try PathLock.withLock(path) {
                let document = try readDocument(SymmetricKey(data: bytes))
                var entries: [TokenStoreKey: TokenStoreEntry] = [:]
                for entry in document.entries {
                    entries[entry.key] = TokenStoreEntry(token: entry.token, version: entry.version ?? 1)
                }
                for removal in document.removed ?? [] {
                    entries[removal.key] = TokenStoreEntry(token: nil, version: removal.version)
                }
                return entries
            }
        }
    }
}
