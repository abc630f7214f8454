import CSQLite
import Foundation

/// A prepared statement of one ``SQLiteConnection``: bind the parameters, step through the rows,
/// read the columns. Used only on the connection's thread, and reset after each use so that it
/// can be used again.
final class SQLiteStatement {
    /// SQLite's handle; finalized by the connection when it closes.
    let handle: OpaquePointer
    /// The connection's handle, for its error messages.
    private let connection: OpaquePointer

    /// SQLite's "copy the bytes now" destructor, which Swift cannot import as a macro.
    private static let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)

    /// Wraps a statement that `connection` prepared.
    init(handle: OpaquePointer, connection: OpaquePointer) {
        self.handle = handle
        self.connection = connection
    }

    /// A value to bind to a parameter.
    enum Value {
        /// A 64-bit integer.
        case integer(Int64)
        /// A floating-point number (times, in seconds since 1970).
        case real(Double)
        /// UTF-8 text, bound with its length.
        case text(String)
        /// Bytes.
        case blob(Data)
        /// NULL.
        case null
    }

    /// Binds `values` to the parameters `?1`, `?2`, … in order.
    ///
    /// - Throws: ``SQLiteFailure`` when SQLite refuses a value.
    func bind(_ values: [Value]) throws {
        sqlite3_reset(handle)
        sqlite3_clear_bindings(handle)
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let status: Int32
            switch value {
            case .integer(let number): status = sqlite3_bind_int64(handle, index, number)
            case .real(let number): status = sqlite3_bind_double(handle, index, number)
            case .text(let text):
                // With its length: a key may hold a NUL, which would end a C string early.
                let bytes = Array(text.utf8) + [0]
                status = bytes.withUnsafeBufferPointer { buffer in
                    buffer.withMemoryRebound(to: CChar.self) {
                        sqlite3_bind_text(handle, index, $0.baseAddress, Int32(buffer.count - 1), Self.transient)
                    }
                }
            case .blob(let data):
                status = data.withUnsafeBytes { bytes in
                    // An empty blob still binds a blob, not NULL: any non-null pointer will do.
                    sqlite3_bind_blob(
                        handle,
                        index,
                        bytes.baseAddress ?? UnsafeRawPointer(handle),
                        Int32(bytes.count),
                        Self.transient
                    )
                }
            case .null: status = sqlite3_bind_null(handle, index)
            }
            guard status == SQLITE_OK else { throw SQLiteFailure(code: status, connection: connection) }
        }
    }

    /// Moves to the next row.
    ///
    /// - Returns: `true` when there is a row to read, `false` when the statement is done.
    /// - Throws: ``SQLiteFailure`` for any other result (`SQLITE_BUSY` once the busy handler
    ///   gave up, `SQLITE_FULL`, `SQLITE_CORRUPT`, …).
    func step() throws -> Bool {
        switch sqlite3_step(handle) {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        case let status: throw SQLiteFailure(code: status, connection: connection)
        }
    }

    /// Runs the statement to its end, for statements that return no rows.
    func run() throws {
        defer { sqlite3_reset(handle) }
        while try step() {}
    }

    /// Column `index` of the current row as an integer.
    func integer(_ index: Int32) -> Int64 { sqlite3_column_int64(handle, index) }

    /// Column `index` of the current row as a number.
    func real(_ index: Int32) -> Double { sqlite3_column_double(handle, index) }

    /// Column `index` of the current row as text; `nil` when it is NULL.
    func text(_ index: Int32) -> String? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL, let bytes = sqlite3_column_text(handle, index) else {
            return nil
        }
        let count = Int(sqlite3_column_bytes(handle, index))
        return String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    }

    /// Column `index` of the current row as bytes; `nil` when it is NULL.
    func blob(_ index: Int32) -> Data? {
        guard sqlite3_column_type(handle, index) != SQLITE_NULL else { return nil }
        let count = Int(sqlite3_column_bytes(handle, index))
        guard count > 0, let bytes = sqlite3_column_blob(handle, index) else { return Data() }
        return Data(bytes: bytes, count: count)
    }

    /// Ends the current use, so that the statement can be bound and run again.
    func reset() { sqlite3_reset(handle) }
}
