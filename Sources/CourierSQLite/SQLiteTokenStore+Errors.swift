import CSQLite
import Courier

extension SQLiteTokenStore {
    /// `error` as the ``/Courier/CourierError`` a caller of the store sees: what failed and
    /// why, with the store's path, never a token.
    ///
    /// A file that is damaged or not a store is one of the kinds a broker treats as damage
    /// (never papered over with a fresh token); a full disk, a lock held too long or a file
    /// that cannot be opened is ``/Courier/CourierError/Kind/tokenStoreIOFailure``, for which
    /// a broker renews on its own and warns.
    ///
    /// - Parameters:
    ///   - error: What the worker, SQLite or the sealer threw.
    ///   - operation: What the store was doing (`read`, `write`, `lease`, `import`).
    static func courierError(_ error: any Error, operation: String, path: String) -> any Error {
        guard let failure = error as? SQLiteFailure else { return error }
        let prefix = "SQLite token store: \(operation) failed"
        let kind: CourierError.Kind
        let text: String
        switch failure.primaryCode {
        case SQLITE_CORRUPT:
            kind = .tokenStoreTampered
            text = "the database file is damaged (\(failure.message))"
        case SQLITE_NOTADB:
            kind = .tokenStoreUnsupportedFormat
            text = failure.message == "file is not a database" ? "the file is not an SQLite database" : failure.message
        case SQLITE_FULL:
            kind = .tokenStoreIOFailure
            text = "the disk is full (\(failure.message)); what the store held is unchanged"
        case SQLITE_BUSY, SQLITE_LOCKED:
            kind = .tokenStoreIOFailure
            text = "another connection held the database locked for longer than the busy timeout"
        case SQLITE_IOERR, SQLITE_CANTOPEN, SQLITE_READONLY, SQLITE_PERM, SQLITE_NOLFS, SQLITE_PROTOCOL,
            SQLITE_AUTH, SQLITE_NOMEM:
            kind = .tokenStoreIOFailure
            text = failure.message
        default:
            kind = .tokenStoreFailed
            text = failure.message
        }
        return CourierError.tokenStore(kind, message: "\(prefix): \(text) [SQLite \(failure.code)]", path: path)
    }
}
