import Foundation

/// The SQL of a ``SQLiteTokenStore``: each operation as it runs on a worker's connection, in
/// one transaction. Tokens arrive here sealed and leave sealed: no key reaches this code.
enum TokenTable {
    /// A row as read: its version and its sealed token (`nil`: a tombstone).
    struct Row: Sendable {
        /// The entry's version.
        let version: UInt64
        /// The sealed token; `nil` for a tombstone.
        let sealed: Data?
    }

    /// A sealed token to write under a key.
    struct Write: Sendable {
        /// Where it goes.
        let key: EntryKey
        /// The sealed token; `nil` for a removal.
        let sealed: Data?
    }

    /// The condition that selects the row of one key, with its columns bound from `?1` to `?4`
    /// (``EntryKey/values``).
    static let keyMatch = "client_id = ?1 AND has_user = ?2 AND user_key = ?3 AND level = ?4"

    /// The row of `key`; `nil` when there is none.
    static func row(_ connection: SQLiteConnection, _ key: EntryKey) throws -> Row? {
        try connection.first("SELECT version, sealed_token FROM tokens WHERE \(keyMatch)", key.values) {
            Row(version: UInt64(max(0, $0.integer(0))), sealed: $0.blob(1))
        }
    }

    /// Writes `write` when its key's version is still `expected` (0: no row), or whatever it
    /// is when `expected` is `nil`; in one write transaction.
    ///
    /// - Returns: The version written; `nil` when the version had moved on.
    static func write(
        _ connection: SQLiteConnection,
        _ write: Write,
        ifVersion expected: UInt64?,
        now: Date,
        tombstoneRetention: Duration
    ) throws -> UInt64? {
        try connection.writeTransaction {
            if let expected, (try row(connection, write.key)?.version ?? 0) != expected { return nil }
            let version = try nextVersion(connection)
            try connection.run(
                """
                INSERT INTO tokens (client_id, has_user, user_key, level, version, sealed_token, updated_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                ON CONFLICT (client_id, has_user, user_key, level) DO UPDATE
                SET version = excluded.version, sealed_token = excluded.sealed_token, updated_at = excluded.updated_at
                """,
                write.key.values + [
                    .integer(Int64(version)), write.sealed.map { .blob($0) } ?? .null,
                    .real(now.timeIntervalSince1970),
                ]
            )
            try pruneIfDue(connection, now: now, tombstoneRetention: tombstoneRetention)
            return version
        }
    }

    /// Removes the tokens that `condition` (SQL over the key's columns, with `values` bound
    /// from `?1`) selects, leaving a tombstone with a new version for each; rows that are
    /// tombstones already are left alone.
    ///
    /// - Returns: How many tokens were removed.
    @discardableResult
    static func remove(
        _ connection: SQLiteConnection,
        where condition: String,
        _ values: [SQLiteStatement.Value],
        now: Date,
        tombstoneRetention: Duration
    ) throws -> Int {
        try connection.writeTransaction {
            let live = "\(condition) AND sealed_token IS NOT NULL"
            guard try connection.first("SELECT 1 FROM tokens WHERE \(live) LIMIT 1", values, { _ in true }) != nil
            else { return 0 }
            // One new version for every row of the removal: each key still gets a version it
            // never had.
            let version = try nextVersion(connection)
            let parameters = values.count
            let removed = try connection.run(
                """
                UPDATE tokens SET sealed_token = NULL, version = ?\(parameters + 1), updated_at = ?\(parameters + 2)
                WHERE \(live)
                """,
                values + [.integer(Int64(version)), .real(now.timeIntervalSince1970)]
            )
            try pruneIfDue(connection, now: now, tombstoneRetention: tombstoneRetention)
            return removed
        }
    }

    /// Writes each of `writes` whose key has no row at all (neither a token nor a tombstone),
    /// in one transaction, all under one new version.
    ///
    /// - Returns: How many were written.
    static func insertMissing(_ connection: SQLiteConnection, _ writes: [Write], now: Date) throws -> Int {
        guard !writes.isEmpty else { return 0 }
        return try connection.writeTransaction {
            let version = try nextVersion(connection)
            var inserted = 0
            for write in writes {
                inserted += try connection.run(
                    """
                    INSERT INTO tokens (client_id, has_user, user_key, level, version, sealed_token, updated_at)
                    VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                    ON CONFLICT (client_id, has_user, user_key, level) DO NOTHING
                    """,
                    write.key.values + [
                        .integer(Int64(version)), write.sealed.map { .blob($0) } ?? .null,
                        .real(now.timeIntervalSince1970),
                    ]
                )
            }
            return inserted
        }
    }

    /// Takes the lease on `key` for `holder` until `expiresAt` when nobody holds it or its
    /// lease timed out by `now`.
    ///
    /// Leases are not flushed to the disk (see ``leasesAreDurable``).
    ///
    /// - Returns: Whether the lease was taken.
    static func acquireLease(
        _ connection: SQLiteConnection,
        _ key: EntryKey,
        holder: String,
        now: Date,
        expiresAt: Date
    ) throws -> Bool {
        try connection.writeTransaction(durable: leasesAreDurable) {
            try connection.run(
                """
                INSERT INTO leases (client_id, has_user, user_key, level, holder, expires_at)
                VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                ON CONFLICT (client_id, has_user, user_key, level) DO UPDATE
                SET holder = excluded.holder, expires_at = excluded.expires_at
                WHERE leases.expires_at <= ?7
                """,
                key.values + [
                    .text(holder), .real(expiresAt.timeIntervalSince1970), .real(now.timeIntervalSince1970),
                ]
            ) == 1
        }
    }

    /// Ends the lease on `key` if `holder` still holds it.
    static func releaseLease(_ connection: SQLiteConnection, _ key: EntryKey, holder: String) throws {
        _ = try connection.writeTransaction(durable: leasesAreDurable) {
            try connection.run("DELETE FROM leases WHERE \(keyMatch) AND holder = ?5", key.values + [.text(holder)])
        }
    }

    /// Whether taking and releasing a lease waits for the disk: no. A lease lives seconds,
    /// and a power cut that undid one ends its holder too; the flush would double what a
    /// renewal costs (a lease taken, a token written, the lease released: three commits).
    static let leasesAreDurable = false

    /// The next version: one more than the last handed out, recorded in the transaction.
    private static func nextVersion(_ connection: SQLiteConnection) throws -> UInt64 {
        try connection.run("UPDATE versions SET last = last + 1 WHERE id = 0")
        let last = try connection.first("SELECT last FROM versions WHERE id = 0") { $0.integer(0) }
        guard let last, last > 0 else {
            throw SQLiteFailure(code: 11, message: "the table of versions is empty")  // SQLITE_CORRUPT
        }
        return UInt64(last)
    }

    /// How often one connection removes old tombstones and timed-out leases.
    static let pruneInterval = Duration.seconds(60)

    /// Removes, at most once per ``pruneInterval`` per connection and inside the caller's
    /// transaction, the tombstones older than `tombstoneRetention` and the leases that timed
    /// out.
    ///
    /// A tombstone matters only to a write based on version 0 — a writer that saw no entry
    /// before the token was first written — and no such writer waits for long: a write
    /// follows its read within a lease or a token request. Every other version a key ever had
    /// fails a compare-and-swap after the prune as before it, since versions are never used
    /// twice. A lease that timed out is free to take whether its row is there or not.
    private static func pruneIfDue(_ connection: SQLiteConnection, now: Date, tombstoneRetention: Duration) throws {
        let clock = ContinuousClock.now
        if let last = connection.lastPruned, clock - last < pruneInterval { return }
        let retention =
            Double(tombstoneRetention.components.seconds)
            + Double(tombstoneRetention.components.attoseconds) * 1e-18
        try connection.run(
            "DELETE FROM tokens WHERE sealed_token IS NULL AND updated_at < ?1",
            [.real(now.timeIntervalSince1970 - retention)]
        )
        try connection.run("DELETE FROM leases WHERE expires_at < ?1", [.real(now.timeIntervalSince1970)])
        connection.lastPruned = clock
    }
}
