import CSQLite
import Foundation

/// A plain SQLite connection to a store's file, of the test's own: to look at the rows, change
/// them as an attacker would, or hold the write lock as another process would.
final class RawDatabase {
    /// SQLite's handle.
    private let handle: OpaquePointer

    /// Opens `path`; with `create`, creates it when missing.
    init(_ path: String, create: Bool = false) throws {
        var handle: OpaquePointer?
        let status = sqlite3_open_v2(path, &handle, SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0), nil)
        guard status == SQLITE_OK, let handle else {
            sqlite3_close_v2(handle)
            throw TestSetupError(message: "cannot open \(path): \(status)")
        }
        self.handle = handle
    }

    deinit { sqlite3_close_v2(handle) }

    /// Runs `sql`, which returns no rows.
    func execute(_ sql: String) throws {
        let status = sqlite3_exec(handle, sql, nil, nil, nil)
        guard status == SQLITE_OK else {
            throw TestSetupError(message: "\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
    }

    /// The first column of every row of `sql`, as text.
    func strings(_ sql: String) throws -> [String] {
        var statement: OpaquePointer?
        guard sqlite3_prepare_v2(handle, sql, -1, &statement, nil) == SQLITE_OK, let statement else {
            throw TestSetupError(message: "\(sql): \(String(cString: sqlite3_errmsg(handle)))")
        }
        defer { sqlite3_finalize(statement) }
        var values: [String] = []
        while true {
            switch sqlite3_step(statement) {
            case SQLITE_ROW: values.append(sqlite3_column_text(statement, 0).map { String(cString: $0) } ?? "NULL")
            case SQLITE_DONE: return values
            default: throw TestSetupError(message: "\(sql): \(String(cString: sqlite3_errmsg(handle)))")
            }
        }
    }
}
