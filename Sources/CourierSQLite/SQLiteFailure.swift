import CSQLite

/// What SQLite returned when a call failed: its result code and its own text. Made on the
/// thread of the connection; a ``SQLiteTokenStore`` turns it into a ``/Courier/CourierError``
/// before any caller sees it.
struct SQLiteFailure: Error, Sendable, CustomStringConvertible {
    /// The extended result code (`SQLITE_FULL`, `SQLITE_IOERR_WRITE`, …).
    let code: Int32
    /// SQLite's message for it.
    let message: String

    /// The primary result code: the extended code without its detail bits.
    var primaryCode: Int32 { code & 0xFF }

    /// A failure of `connection`'s last call, with SQLite's message for it.
    ///
    /// - Parameters:
    ///   - code: The result code the call returned.
    ///   - connection: The connection, for its message; `nil` when there is none.
    init(code: Int32, connection: OpaquePointer?) {
        self.code = code
        if let connection, let text = sqlite3_errmsg(connection) {
            message = String(cString: text)
        } else if let text = sqlite3_errstr(code) {
            message = String(cString: text)
        } else {
            message = "SQLite error \(code)"
        }
    }

    /// A failure that SQLite did not report, with a text of Courier's.
    ///
    /// - Parameters:
    ///   - code: The result code it stands for.
    ///   - message: What went wrong.
    init(code: Int32, message: String) {
        self.code = code
        self.message = message
    }

    /// `SQLite error <code>: <message>`.
    var description: String { "SQLite error \(code): \(message)" }
}
