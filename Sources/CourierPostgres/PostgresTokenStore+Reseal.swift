#if Postgres
import Courier
import Foundation
import PostgresNIO

extension PostgresTokenStore {
    /// A row as the sweep of ``resealEntries()`` reads it.
    private struct SealedRow: Sendable {
        let key: RowKey
        let version: Int64
        let sealed: Data
    }

    /// How many rows ``resealEntries()`` reads per query.
    static let resealPageSize = 200

    /// Seals again, under the provider's own key, every token still sealed under a key it
    /// accepts (``/Courier/TokenStoreKeyProvider/accepting(_:)``), so that the old key can be
    /// dropped.
    ///
    /// Each write seals one entry under the current key, so a change of key reaches an entry
    /// when it is next written; this sweep reaches the entries nobody writes. It reads the
    /// table a page at a time and writes each token it re-seals in one statement that changes
    /// neither the token nor its version, and only when the row still holds the bytes it read
    /// (a row written meanwhile is left to its writer). Running it again, or in two processes
    /// at once, is harmless. Call it from one process once every process seals with the new
    /// key.
    ///
    /// - Returns: How many entries were sealed again.
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached, or a row does
    ///   not open (``/Courier/CourierError/Kind/tokenStoreWrongKey`` for a row under a key the
    ///   provider neither has nor accepts: the old key is still needed for it, or the row is
    ///   lost already). The rows sealed again before the error stay so.
    @discardableResult
    public func resealEntries() async throws -> Int {
        let key = try await sealer.key()
        var resealed = 0
        var after: RowKey?
        while true {
            try Task.checkCancellation()
            let page = try await sealedRows(after: after)
            for row in page where !sealer.isSealed(row.sealed, under: key) {
                let context = row.key.sealingContext
                let plaintext = try sealer.open(row.sealed, key: key, context: context)
                let fresh = try sealer.seal(plaintext, key: key, context: context)
                if try await replace(row, with: fresh) { resealed += 1 }
            }
            guard page.count == Self.resealPageSize, let last = page.last else { return resealed }
            after = last.key
        }
    }

    /// Up to ``resealPageSize`` rows holding a token, in key order, after `after`.
    private func sealedRows(after: RowKey?) async throws -> [SealedRow] {
        let first = after == nil
        let start = after ?? RowKey(clientID: "", level: "", hasUser: false, user: "")
        let limit = Self.resealPageSize
        return try await bounded("reseal") { [tableName, client, logger] in
            let rows = try await client.query(
                """
                SELECT client_id, level, has_user, user_key, version, sealed_token FROM \(unescaped: tableName)
                WHERE sealed_token IS NOT NULL AND (\(first) OR (client_id, level, has_user, user_key)
                    > (\(start.clientID), \(start.level), \(start.hasUser), \(start.user)))
                ORDER BY client_id, level, has_user, user_key
                LIMIT \(limit)
                """,
                logger: logger
            )
            var page: [SealedRow] = []
            for try await (clientID, level, hasUser, user, version, sealed) in rows.decode(
                (String, String, Bool, String, Int64, Data).self
            ) {
                let key = RowKey(clientID: clientID, level: level, hasUser: hasUser, user: user)
                page.append(SealedRow(key: key, version: version, sealed: sealed))
            }
            return page
        }
    }

    /// Writes `sealed` into `row`'s row when it still has the version and bytes that were
    /// read; the version stays.
    ///
    /// - Returns: Whether the row was written.
    private func replace(_ row: SealedRow, with sealed: Data) async throws -> Bool {
        try await bounded("reseal") { [tableName, client, logger] in
            let key = row.key
            let rows = try await client.query(
                """
                UPDATE \(unescaped: tableName) SET sealed_token = \(sealed), updated_at = now()
                WHERE client_id = \(key.clientID) AND level = \(key.level)
                    AND has_user = \(key.hasUser) AND user_key = \(key.user)
                    AND version = \(row.version) AND sealed_token = \(row.sealed)
                RETURNING version
                """,
                logger: logger
            )
            var written = false
            for try await _ in rows.decode(Int64.self) { written = true }
            return written
        }
    }
}
#endif
