import Courier
import Foundation

@testable import CourierSQLite

extension SQLiteTokenStore {
    /// Writes each token under its key where the key has no row yet, all in one transaction
    /// with one version, sealed under the store's key: a store of many users in a moment,
    /// where writing them one by one would wait for the disk once per user.
    ///
    /// - Returns: How many were written.
    @discardableResult
    func fill(_ tokens: [(key: TokenStoreKey, token: OAuth2Token)]) async throws -> Int {
        var writes: [TokenTable.Write] = []
        for (key, token) in tokens {
            let row = EntryKey(key)
            writes.append(TokenTable.Write(key: row, sealed: try await seal(token, for: row)))
        }
        let batch = writes
        return try await write("fill") { connection in try TokenTable.insertMissing(connection, batch, now: Date()) }
    }

    /// Every row holding a token, sealed as it is on the disk, in key order.
    func sealedRows() async throws -> [TokenTable.SealedRow] {
        var rows: [TokenTable.SealedRow] = []
        while true {
            let after = rows.last?.key
            let page = try await read("rows") { connection in
                try TokenTable.sealedRows(connection, after: after, limit: 1000)
            }
            rows += page
            if page.count < 1000 { return rows }
        }
    }

    /// Whether `sealed` is sealed under `key`.
    func isSealed(_ sealed: Data, under key: TokenStoreKeyProvider) async throws -> Bool {
        sealer.isSealed(sealed, under: try await key.key())
    }
}
