import CSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to an SQLite database, used by one thread only (an ``SQLiteWorker``'s): its
/// prepared statements, kept for reuse, and what the token store remembers about it.
///
/// Every call may block — on the disk, on `fsync`, on another process's lock — which is why
/// only a worker's thread makes them.
final class SQLiteConnection {
    /// SQLite's handle.
    let handle: OpaquePointer
    /// The prepared statements, by their SQL.
    private var statements: [String: SQLiteStatement] = [:]
    /// When this connection last removed tombstones and expired leases; `nil` before it did.
    var lastPruned: ContinuousClock.Instant?
    /// Whether commits are flushed to the disk now (`PRAGMA synchronous`): FULL, as
    /// ``SQLiteSchema/connectionSettings`` sets it, or NORMAL for one write transaction.
    private var isDurable = true

    /// What SQLite calls when the database is locked: the function and its context.
    struct BusyHandler {
        /// Returns non-zero to wait and try again, 0 to give up with `SQLITE_BUSY`.
        let callback: @convention(c) (UnsafeMutableRawPointer?, Int32) -> Int32
        /// Passed to `callback`; must outlive the connection.
        let context: UnsafeMutableRawPointer
    }

    /// Opens `path`.
    ///
    /// - Parameters:
    ///   - path: The database file.
    ///   - create: Whether to create it when missing (mode 0600: it holds sealed tokens; SQLite
    ///     gives its `-wal` and `-shm` files the database's mode).
    ///   - busyHandler: Decides how long to wait for another connection's lock.
    /// - Throws: ``SQLiteFailure`` when the file cannot be opened or created.
    init(path: String, create: Bool, busyHandler: BusyHandler) throws {
        if create {
            let fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            guard fd >= 0 else {
                throw SQLiteFailure(
                    code: SQLITE_CANTOPEN,
                    message: "cannot create the database: \(String(cString: strerror(errno)))"
                )
            }
            close(fd)
        }
        var handle: OpaquePointer?
        // No mutex: only one thread ever uses the connection.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX
        let status = sqlite3_open_v2(path, &handle, flags, nil)
        guard status == SQLITE_OK, let handle else {
            let failure = SQLiteFailure(code: status, connection: handle)
            sqlite3_close_v2(handle)
            throw failure
        }
        self.handle = handle
        sqlite3_extended_result_codes(handle, 1)
        sqlite3_busy_handler(handle, busyHandler.callback, busyHandler.context)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement.handle) }
        sqlite3_close_v2(handle)
    }

    /// The prepared statement for `sql`, prepared on first use and kept.
    ///
    /// - Throws: ``SQLiteFailure`` when SQLite cannot prepare it (the file is not a database,
    ///   a table is missing).
    func statement(_ sql: String) throws -> SQLiteStatement {
        if let statement = statements[sql] { return statement }
        var prepared: OpaquePointer?
        let status = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &prepared, nil)
        guard status == SQLITE_OK, let prepared else {
            throw SQLiteFailure(code: status, connection: handle)
        }
        let statement = SQLiteStatement(handle: prepared, connection: handle)
        statements[sql] = statement
        return statement
    }

    /// Runs `sql`, which may hold several statements and returns no rows: pragmas, schema,
    /// `BEGIN`, `COMMIT`.
    func execute(_ sql: String) throws {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else { throw SQLiteFailure(code: status, connection: handle) }
    }

    /// Runs `sql` with `values` bound and reads its first row with `read`.
    ///
    /// - Returns: What `read` made of the first row; `nil` when there is none.
    func first<Result>(
        _ sql: String,
        _ values: [SQLiteStatement.Value] = [],
        _ read: (SQLiteStatement) throws -> Result
    ) throws -> Result? {
        let statement = try self.statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        guard try statement.step() else { return nil }
        return try read(statement)
    }

    /// Runs `sql` with `values` bound, for statements that change rows.
    ///
    /// - Returns: How many rows it changed.
    @discardableResult
    func run(_ sql: String, _ values: [SQLiteStatement.Value] = []) throws -> Int {
        let statement = try self.statement(sql)
        try statement.bind(values)
        try statement.run()
        return Int(sqlite3_changes(handle))
    }

    /// The value of an integer pragma (`user_version`, `application_id`).
    func pragma(_ name: String) throws -> Int64 {
        try first("PRAGMA \(name)") { $0.integer(0) } ?? 0
    }

    /// Runs `body` in a write transaction taken at once (`BEGIN IMMEDIATE`): one writer at a
    /// time among every connection of every process. When `body` or the commit fails, the
    /// transaction is rolled back: nothing of it is written.
    ///
    /// - Parameters:
    ///   - durable: Whether the commit is flushed to the disk before it returns
    ///     (`synchronous = FULL`). When not (`NORMAL`), a killed process still loses nothing
    ///     committed and the database stays consistent, but a power cut may undo the
    ///     transaction; the next durable commit flushes it with its own.
    ///   - body: The transaction's work.
    func writeTransaction<Result>(durable: Bool = true, _ body: () throws -> Result) throws -> Result {
        if durable != isDurable {
            try execute(durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL")
            isDurable = durable
        }
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            // SQLite may have rolled back already (after SQLITE_FULL, say); a second rollback
            // would fail.
            if sqlite3_get_autocommit(handle) == 0 { _ = sqlite3_exec(handle, "ROLLBACK", nil, nil, nil) }
            throw error
        }
    }
}
