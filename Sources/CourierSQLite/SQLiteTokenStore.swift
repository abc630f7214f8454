import CSQLite
public import Courier
import Crypto
import Foundation

/// Tokens in an SQLite database on the local disk, one row per entry: the store for a service
/// on one host that acts for many users (``/Courier/ResourceAccess/userClient(for:)``), shared
/// by all of its processes.
///
/// ```swift
/// configuration.tokenStore = SQLiteTokenStore(path: "/var/lib/my-service/tokens.sqlite")
/// ```
///
/// - **Cost per call independent of the number of users.** A read or a write touches one row,
///   through the primary key; logging one user out touches that user's rows. Nothing reads or
///   rewrites the whole store.
/// - **Encrypted rows.** Each token is sealed with AES-256-GCM under the key of a
///   ``/Courier/TokenStoreKeyProvider``, as ``/Courier/EncryptedFileTokenStore`` seals its file,
///   with the row's key authenticated with it: a row that was changed, or copied under another
///   key, throws ``/Courier/CourierError/Kind/tokenStoreTampered``, never a garbage token. The
///   default key lives in `<path>.key`, created on first use (mode 0600).
/// - **Shared by the processes of one host.** The database is in WAL mode: readers never wait
///   for a writer, and each write is one `BEGIN IMMEDIATE` transaction, so one process writes
///   at a time. A compare-and-swap write checks the entry's version in the transaction that
///   writes it. A lease is a row (holder, expiry) taken in one transaction when nobody holds
///   it or its holder's time ran out, and released only by its holder.
/// - **Versions never repeat.** Every write takes its version from one counter for the whole
///   store, so an entry's versions rise and are never handed out twice — not even to an entry
///   that was removed and written again. A removal leaves a tombstone (no token, a new
///   version), kept for an hour and then pruned: by then no writer can still hold a read of
///   the entry from before it was first written, and every other version it had fails a
///   compare-and-swap as before.
/// - **Durable.** Every write of a token or a removal is flushed to the disk before the call
///   returns (`synchronous = FULL`): it survives a killed process and a power cut. A process
///   killed in the middle of a write leaves the store as it was before that write. Leases,
///   which live seconds, are committed without the flush.
/// - **Off the cooperative pool.** SQLite's calls block — on the disk, on `fsync`, on another
///   process's lock — so the store makes them on two threads of its own, one that writes and
///   one that reads (reads do not wait behind writes), and callers await them. A caller
///   cancelled while its call waits — in the queue, or for another process's lock — gets
///   `CancellationError`, and nothing of that call is written.
/// - **Typed errors.** A damaged file (not a database, a corrupted page) or a store of a newer
///   schema throws a kind a broker treats as damage
///   (``/Courier/CourierError/Kind/tokenStoreTampered``,
///   ``/Courier/CourierError/Kind/tokenStoreUnsupportedFormat``,
///   ``/Courier/CourierError/Kind/tokenStoreWrongKey``); a full disk, a lock held past
///   ``Configuration/busyTimeout`` or a file that cannot be opened throws
///   ``/Courier/CourierError/Kind/tokenStoreIOFailure``, and what the store held stays as it was.
///
/// The store is a class rather than an actor: it keeps no state of its own to protect —
/// SQLite's work is already serialized on its threads — and an actor would add a hop to
/// every call and serialize the encryption, which runs on the caller's task.
///
/// A store opens its file on its first call; the threads end, and the file is closed, when the
/// store is released. Several stores may open one file, in one process or in many: they
/// behave as separate processes do.
///
/// Moving from an ``/Courier/EncryptedFileTokenStore``: ``importEntries(fromFileStoreAt:keyProvider:)``.
public final class SQLiteTokenStore: SharedTokenStore {
    /// The database file.
    public let path: String
    /// How the store waits for other processes.
    public let configuration: Configuration
    /// Seals and opens the tokens, with the key asked of the provider once.
    let sealer: TokenSealer
    /// The thread and connection of every write: tokens, removals, leases, the schema.
    let writer: SQLiteWorker
    /// The thread and connection of the reads, which never wait for the writer.
    let reader: SQLiteWorker

    /// Creates a store; the file is opened, and created when missing (mode 0600), on the first
    /// call.
    ///
    /// - Parameters:
    ///   - path: The database file; its directory must exist. SQLite keeps `<path>-wal` and
    ///     `<path>-shm` beside it.
    ///   - keyProvider: The 256-bit key that seals the tokens; by default
    ///     ``/Courier/TokenStoreKeyProvider/keyFile(atPath:)`` at `<path>.key`. Every process
    ///     that shares the file needs the same key.
    ///   - configuration: How long to wait for other processes' locks.
    public init(path: String, keyProvider: TokenStoreKeyProvider? = nil, configuration: Configuration = .init()) {
        self.path = path
        self.configuration = configuration
        self.sealer = TokenSealer(keyProvider: keyProvider ?? .keyFile(atPath: path + ".key"), location: path)
        self.writer = SQLiteWorker(name: "courier.sqlite.writer", busyTimeout: configuration.busyTimeout) { handler in
            let connection = try SQLiteConnection(path: path, create: true, busyHandler: handler)
            try SQLiteSchema.prepareWriter(connection)
            return connection
        }
        self.reader = SQLiteWorker(name: "courier.sqlite.reader", busyTimeout: configuration.busyTimeout) { handler in
            let connection = try SQLiteConnection(path: path, create: false, busyHandler: handler)
            try SQLiteSchema.prepareReader(connection)
            return connection
        }
    }

    deinit {
        writer.stopSoon()
        reader.stopSoon()
    }

    // MARK: TokenStore

    /// The token under `key`.
    ///
    /// - Throws: ``/Courier/CourierError`` when the file cannot be read or is damaged, or the row
    ///   does not open with the key.
    public func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
        try await entry(for: key).token
    }

    /// Stores `token` under `key` whatever its version, or removes it (`nil`, leaving a
    /// tombstone); the entry gets a new version. Removing an entry that has no token changes
    /// nothing.
    ///
    /// - Throws: ``/Courier/CourierError`` when the file cannot be written (the disk is full,
    ///   another process holds the lock past the busy timeout) or is damaged.
    public func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
        let row = EntryKey(key)
        guard let token else {
            let retention = configuration.tombstoneRetention
            try await write("remove") { connection in
                try TokenTable.remove(
                    connection,
                    where: TokenTable.keyMatch,
                    row.values,
                    now: Date(),
                    tombstoneRetention: retention
                )
            }
            return
        }
        let write = TokenTable.Write(key: row, sealed: try await seal(token, for: row))
        let retention = configuration.tombstoneRetention
        _ = try await self.write("write") { connection in
            try TokenTable.write(connection, write, ifVersion: nil, now: Date(), tombstoneRetention: retention)
        }
    }

    /// Removes every token of the client, at every level and for every user, leaving a
    /// tombstone with a new version for each.
    ///
    /// - Throws: ``/Courier/CourierError`` when the file cannot be written.
    public func removeTokens(clientID: String) async throws {
        let retention = configuration.tombstoneRetention
        try await write("remove") { connection in
            try TokenTable.remove(
                connection,
                where: "client_id = ?1",
                [.text(clientID)],
                now: Date(),
                tombstoneRetention: retention
            )
        }
    }

    /// Removes every token of one user of the client, at every level, leaving every other
    /// user's tokens in place; `nil` is the single user of ``/Courier/ResourceAccess/userClient``
    /// (and the tokens of no user, such as the device token).
    ///
    /// - Throws: ``/Courier/CourierError`` when the file cannot be written.
    public func removeTokens(clientID: String, user: String?) async throws {
        let values: [SQLiteStatement.Value] = [.text(clientID), .integer(user == nil ? 0 : 1), .text(user ?? "")]
        let retention = configuration.tombstoneRetention
        try await write("remove") { connection in
            try TokenTable.remove(
                connection,
                where: "client_id = ?1 AND has_user = ?2 AND user_key = ?3",
                values,
                now: Date(),
                tombstoneRetention: retention
            )
        }
    }

    // MARK: SharedTokenStore

    /// The entry under `key` with its version; version 0 and no token when nothing was ever
    /// written (or its tombstone was pruned).
    ///
    /// - Throws: ``/Courier/CourierError`` when the file cannot be read or is damaged, or the row
    ///   does not open with the key (``/Courier/CourierError/Kind/tokenStoreWrongKey``,
    ///   ``/Courier/CourierError/Kind/tokenStoreTampered``).
    public func entry(for key: TokenStoreKey) async throws -> TokenStoreEntry {
        let row = EntryKey(key)
        let found = try await read("read") { connection in try TokenTable.row(connection, row) }
        guard let found else { return TokenStoreEntry(token: nil, version: 0) }
        return TokenStoreEntry(token: try await open(found.sealed, for: row), version: found.version)
    }

    /// Writes `token` (`nil`: a tombstone) under `key` when the entry is still at `version`,
    /// checked in the transaction that writes.
    ///
    /// - Returns: The entry as written, with its new version; `nil` when its version had moved
    ///   on and nothing was written.
    /// - Throws: ``/Courier/CourierError`` when the file cannot be written or is damaged.
    public func setToken(
        _ token: OAuth2Token?,
        for key: TokenStoreKey,
        ifVersion version: UInt64
    ) async throws
        -> TokenStoreEntry?
    {
        let row = EntryKey(key)
        let write = TokenTable.Write(key: row, sealed: try await token.asyncMap { try await seal($0, for: row) })
        let retention = configuration.tombstoneRetention
        let written = try await self.write("write") { connection in
            try TokenTable.write(connection, write, ifVersion: version, now: Date(), tombstoneRetention: retention)
        }
        return written.map { TokenStoreEntry(token: token, version: $0) }
    }

    /// Takes the lease on `key` for `duration` when nobody holds it or its holder's time ran
    /// out (by this host's clock), without waiting for the holder.
    ///
    /// - Returns: The lease, or `nil` when another holder has it.
    /// - Throws: ``/Courier/CourierError`` when the file cannot be written.
    public func acquireLease(for key: TokenStoreKey, duration: Duration) async throws -> TokenStoreLease? {
        let row = EntryKey(key)
        let holder = "pid \(ProcessInfo.processInfo.processIdentifier) \(UUID().uuidString.lowercased())"
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) * 1e-18
        let now = Date()
        let expiresAt = now.addingTimeInterval(seconds)
        let taken = try await write("lease") { connection in
            try TokenTable.acquireLease(connection, row, holder: holder, now: now, expiresAt: expiresAt)
        }
        return taken ? TokenStoreLease(key: key, holder: holder, expiresAt: expiresAt) : nil
    }

    /// Ends `lease` when its holder still holds it; a lease that timed out and was taken by
    /// another holder is left alone.
    ///
    /// - Throws: ``/Courier/CourierError`` when the file cannot be written; the lease then ends
    ///   when it times out.
    public func releaseLease(_ lease: TokenStoreLease) async throws {
        let row = EntryKey(lease.key)
        let holder = lease.holder
        try await write("release") { connection in try TokenTable.releaseLease(connection, row, holder: holder) }
    }

    // MARK: Calls

    /// Runs `body` on the reader's thread; every error as a ``/Courier/CourierError`` (or
    /// `CancellationError`). A file that is missing or has no tables yet is created by the
    /// writer first; a store that exists is read without the writer, whatever it waits for.
    /// A reader of a WAL file is refused only while the file changes state (another connection
    /// switching it to WAL or recovering it), and SQLite refuses at once rather than wait: such
    /// a read waits for the writer's turn, which does wait, and is tried again (at most 20
    /// times, a little later each time).
    func read<Value: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (SQLiteConnection) throws -> Value
    ) async throws -> Value {
        do {
            var attempt = 0
            while true {
                do {
                    return try await reader.perform(body)
                } catch let failure as SQLiteFailure
                    where failure.primaryCode == SQLITE_EMPTY || failure.primaryCode == SQLITE_CANTOPEN
                    || (failure.primaryCode == SQLITE_BUSY && attempt < 20)
                {
                    attempt += 1
                    try await writer.perform { _ in }
                    if failure.primaryCode == SQLITE_BUSY { try await Task.sleep(for: .milliseconds(attempt)) }
                }
            }
        } catch {
            throw Self.courierError(error, operation: operation, path: path)
        }
    }

    /// Runs `body` on the writer's thread; every error as a ``/Courier/CourierError`` (or
    /// `CancellationError`).
    @discardableResult
    func write<Value: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable (SQLiteConnection) throws -> Value
    ) async throws -> Value {
        do {
            return try await writer.perform(body)
        } catch {
            throw Self.courierError(error, operation: operation, path: path)
        }
    }

    // MARK: Sealing

    /// `token` as JSON, sealed for the row of `key`.
    func seal(_ token: OAuth2Token, for key: EntryKey) async throws -> Data {
        try await sealer.sealToken(token, context: key.sealingContext)
    }

    /// The token sealed in a row of `key`; `nil` for a tombstone.
    private func open(_ sealed: Data?, for key: EntryKey) async throws -> OAuth2Token? {
        guard let sealed else { return nil }
        return try await sealer.openToken(sealed, context: key.sealingContext)
    }
}

extension Optional {
    /// The wrapped value transformed by `transform`, which may suspend; `nil` stays `nil`.
    fileprivate func asyncMap<Mapped>(_ transform: (Wrapped) async throws -> Mapped) async rethrows -> Mapped? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
