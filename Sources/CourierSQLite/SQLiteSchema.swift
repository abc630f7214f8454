import CSQLite
import Glibc

/// The database a ``SQLiteTokenStore`` keeps: how each connection is set up, and the schema,
/// created on first use and versioned so that a later Courier can migrate it.
///
/// ### Schema version 1
///
/// - `tokens`: one row per entry, keyed by client id, user (`has_user`, and `user_key` `''`
///   when there is none, so that the key is unique without relying on how NULLs compare) and
///   level, in that order, so that one user's rows and one client's rows are each a range of
///   the key. `version` comes from `versions`; `sealed_token` is the token sealed with
///   AES-256-GCM, the row's key authenticated with it; NULL is a tombstone (a removal).
///   `updated_at` is when the row was written, in seconds since 1970.
/// - `versions`: one row, the last version handed out. Every write takes the next, so a
///   version is never used twice, for any key — not even after a tombstone is pruned.
/// - `leases`: one row per lease held: its holder and when it times out.
///
/// The file is marked as Courier's with `PRAGMA application_id` (`"CTKS"`), and the schema's
/// version is `PRAGMA user_version`.
enum SQLiteSchema {
    /// The schema this Courier writes and reads.
    static let version: Int64 = 1
    /// `PRAGMA application_id` of a Courier token store: `"CTKS"`.
    static let applicationID: Int64 = 0x4354_4B53

    /// How the store's connections trade speed for safety, set on every connection:
    ///
    /// - WAL: readers never wait for the writer, and one writer at a time among processes.
    /// - `synchronous = FULL`: every commit is flushed to the disk (`fsync` of the log)
    ///   before it returns, so a committed token survives a power cut as well as a killed
    ///   process. A renewal's new refresh token that a power cut lost would leave the store
    ///   with one the server has already rotated away — a user signed out. Measured on a
    ///   virtual disk (ext4): about 3 ms per commit, against 33 µs with `NORMAL` (which
    ///   survives a killed process, not a power cut); a renewal writes once. Leases, which
    ///   need no such care, commit with `NORMAL` (``TokenTable/leasesAreDurable``).
    static let connectionSettings = """
        PRAGMA journal_mode = WAL;
        PRAGMA synchronous = FULL;
        PRAGMA foreign_keys = OFF;
        PRAGMA journal_size_limit = 4194304;
        """

    /// Schema version 1.
    static let version1 = """
        CREATE TABLE tokens (
            client_id TEXT NOT NULL,
            has_user INTEGER NOT NULL,
            user_key TEXT NOT NULL,
            level TEXT NOT NULL,
            version INTEGER NOT NULL,
            sealed_token BLOB,
            updated_at REAL NOT NULL,
            PRIMARY KEY (client_id, has_user, user_key, level)
        ) WITHOUT ROWID;
        CREATE INDEX tokens_removed ON tokens (updated_at) WHERE sealed_token IS NULL;
        CREATE TABLE versions (id INTEGER PRIMARY KEY CHECK (id = 0), last INTEGER NOT NULL);
        INSERT INTO versions (id, last) VALUES (0, 0);
        CREATE TABLE leases (
            client_id TEXT NOT NULL,
            has_user INTEGER NOT NULL,
            user_key TEXT NOT NULL,
            level TEXT NOT NULL,
            holder TEXT NOT NULL,
            expires_at REAL NOT NULL,
            PRIMARY KEY (client_id, has_user, user_key, level)
        ) WITHOUT ROWID;
        PRAGMA application_id = \(applicationID);
        PRAGMA user_version = 1;
        """

    /// Sets up the writer's connection and creates the schema in an empty file, or checks
    /// the schema of a store: in one write transaction, so that processes opening a new file
    /// at once create it once.
    ///
    /// - Throws: ``SQLiteFailure`` with `SQLITE_NOTADB` for a file that is not a Courier token
    ///   store (another application's database, a newer schema), and whatever SQLite throws.
    static func prepareWriter(_ connection: SQLiteConnection) throws {
        // Switching a new file to WAL takes an exclusive lock, and SQLite answers BUSY at once,
        // without its busy handler, while another process makes the same switch: try again,
        // for at most about two seconds.
        var attempt = 0
        while true {
            do {
                try connection.execute(connectionSettings)
                break
            } catch let failure as SQLiteFailure where failure.primaryCode == SQLITE_BUSY && attempt < 400 {
                attempt += 1
                usleep(5_000)
            }
        }
        try connection.writeTransaction {
            let application = try connection.pragma("application_id")
            let version = try connection.pragma("user_version")
            let objects = try connection.first("SELECT count(*) FROM sqlite_master") { $0.integer(0) } ?? 0
            switch (application, version) {
            case (0, 0) where objects == 0:
                try connection.execute(version1)
            case (applicationID, 1...Self.version):
                break
            case (applicationID, _):
                throw SQLiteFailure(
                    code: SQLITE_NOTADB,
                    message: "the store has schema version \(version); this Courier reads up to \(Self.version)"
                )
            default:
                throw SQLiteFailure(code: SQLITE_NOTADB, message: "the database is not a Courier token store")
            }
        }
    }

    /// Sets up a reader's connection — it only reads, and never waits for the writer — and
    /// checks that the file is a store this Courier reads, without taking any lock.
    ///
    /// - Throws: ``SQLiteFailure`` with `SQLITE_EMPTY` for a file that has no schema yet, or
    ///   that another connection is setting up (the writer creates it or waits), `SQLITE_NOTADB` as ``prepareWriter(_:)`` does, and whatever
    ///   SQLite throws.
    static func prepareReader(_ connection: SQLiteConnection) throws {
        try connection.execute("PRAGMA query_only = ON;")
        // One read transaction, so that the three values come from one snapshot: read one by
        // one, they could straddle another process's creation of the schema (an application ID
        // still 0 beside a version already 1) and call a new store another application's.
        try connection.execute("BEGIN;")
        let snapshot: (application: Int64, version: Int64, objects: Int64)
        do {
            snapshot = (
                try connection.pragma("application_id"),
                try connection.pragma("user_version"),
                try connection.first("SELECT count(*) FROM sqlite_master") { $0.integer(0) } ?? 0
            )
            try connection.execute("COMMIT;")
        } catch let failure as SQLiteFailure where failure.primaryCode == SQLITE_BUSY {
            // Another connection is making the file a store (switching it to WAL, creating the
            // schema) and SQLite does not wait for that: let the writer wait for it, then read.
            try? connection.execute("ROLLBACK;")
            throw SQLiteFailure(code: SQLITE_EMPTY, message: "the store is being created by another connection")
        } catch {
            try? connection.execute("ROLLBACK;")
            throw error
        }
        let (application, version, objects) = snapshot
        switch (application, version) {
        case (applicationID, 1...Self.version):
            break
        case (applicationID, _):
            throw SQLiteFailure(
                code: SQLITE_NOTADB,
                message: "the store has schema version \(version); this Courier reads up to \(Self.version)"
            )
        case (0, 0) where objects == 0:
            throw SQLiteFailure(code: SQLITE_EMPTY, message: "the store has no tables yet")
        default:
            throw SQLiteFailure(code: SQLITE_NOTADB, message: "the database is not a Courier token store")
        }
    }
}
