import Foundation

extension TokenTable {
    /// A row holding a token, as ``SQLiteTokenStore/resealEntries()`` reads it.
    struct SealedRow: Sendable {
        let key: EntryKey
        let version: UInt64
        let sealed: Data
    }

    /// A row's token sealed again, to write in place of what was read.
    struct Replacement: Sendable {
        let row: SealedRow
        let sealed: Data
    }

    /// Up to `limit` rows holding a token, in key order, after the row of `after` (from the
    /// first when `nil`).
    static func sealedRows(_ connection: SQLiteConnection, after: EntryKey?, limit: Int) throws -> [SealedRow] {
        let columns = "client_id, has_user, user_key, level"
        let select = "SELECT \(columns), version, sealed_token FROM tokens WHERE sealed_token IS NOT NULL"
        let sql: String
        var values: [SQLiteStatement.Value] = []
        if let after {
            sql = "\(select) AND (\(columns)) > (?1, ?2, ?3, ?4) ORDER BY \(columns) LIMIT ?5"
            values = after.values
        } else {
            sql = "\(select) ORDER BY \(columns) LIMIT ?1"
        }
        values.append(.integer(Int64(limit)))
        let statement = try connection.statement(sql)
        defer { statement.reset() }
        try statement.bind(values)
        var rows: [SealedRow] = []
        while try statement.step() {
            let key = EntryKey(
                clientID: statement.text(0) ?? "",
                hasUser: statement.integer(1) != 0,
                user: statement.text(2) ?? "",
                level: statement.text(3) ?? ""
            )
            guard let sealed = statement.blob(5) else { continue }
            rows.append(SealedRow(key: key, version: UInt64(max(0, statement.integer(4))), sealed: sealed))
        }
        return rows
    }

    /// Writes each replacement's token into its row when the row still has the version and
    /// the bytes that were read, in one write transaction; versions stay as they are.
    ///
    /// - Returns: How many rows were written.
    static func replace(_ connection: SQLiteConnection, _ replacements: [Replacement]) throws -> Int {
        try connection.writeTransaction {
            var written = 0
            for replacement in replacements {
                let row = replacement.row
                written += try connection.run(
                    """
                    UPDATE tokens SET sealed_token = ?5
                    WHERE \(keyMatch) AND version = ?6 AND sealed_token = ?7
                    """,
                    row.key.values + [
                        .blob(replacement.sealed), .integer(Int64(row.version)), .blob(row.sealed),
                    ]
                )
            }
            return written
        }
    }
}
