import Courier
import Foundation

extension SQLiteTokenStore {
    /// How many rows ``resealEntries()`` reads at a time, and at most how many it writes in
    /// one transaction: few enough that the other processes' writes wait for it a few
    /// milliseconds at most.
    static let resealBatchSize = 500

    /// Seals again, under the provider's own key, every token still sealed under a key it
    /// accepts (``/Courier/TokenStoreKeyProvider/accepting(_:)``), so that the old key can be
    /// dropped.
    ///
    /// Each write seals one entry under the current key, so a change of key reaches an entry
    /// when it is next written; this sweep reaches the entries nobody writes. It reads the
    /// table 500 rows at a time, in key order, and writes the tokens of each
    /// batch it re-seals in one short transaction, so the other processes that share the file
    /// keep writing while it runs. A token is written again unchanged, with its version, and
    /// only when its row still holds the version and the bytes that were read: a row written
    /// meanwhile is left to its writer, whose write is sealed under the current key already.
    /// Running it again, or in two processes at once, is harmless; a second run finds nothing
    /// to do. Call it from one process once every process seals with the new key (see "Rotate
    /// the key" in Courier's documentation).
    ///
    /// ```swift
    /// let store = SQLiteTokenStore(
    ///     path: "/var/lib/my-service/tokens.sqlite",
    ///     keyProvider: .systemdCredential("tokens-2026-12").accepting(.systemdCredential("tokens-2026-11"))
    /// )
    /// let resealed = try await store.resealEntries()
    /// print("sealed \(resealed) tokens again")
    /// ```
    ///
    /// - Returns: How many entries were sealed again.
    /// - Throws: ``/Courier/CourierError`` when the file cannot be read or written, or a row
    ///   does not open (``/Courier/CourierError/Kind/tokenStoreWrongKey`` for a row under a key
    ///   the provider neither has nor accepts: the old key is still needed for it, or the row
    ///   is lost already; ``/Courier/CourierError/Kind/tokenStoreTampered`` for a damaged
    ///   row). The rows sealed again before the error stay so.
    @discardableResult
    public func resealEntries() async throws -> Int {
        let key = try await sealer.key()
        var resealed = 0
        var after: EntryKey?
        while true {
            try Task.checkCancellation()
            let start = after
            let batch = try await read("reseal") { connection in
                try TokenTable.sealedRows(connection, after: start, limit: Self.resealBatchSize)
            }
            var replacements: [TokenTable.Replacement] = []
            var failure: (any Error)?
            for row in batch where !sealer.isSealed(row.sealed, under: key) {
                do {
                    let context = row.key.sealingContext
                    let plaintext = try sealer.open(row.sealed, key: key, context: context)
                    replacements.append(
                        TokenTable.Replacement(
                            row: row,
                            sealed: try sealer.seal(plaintext, key: key, context: context)
                        )
                    )
                } catch {
                    // What opened so far is written first: it stays sealed again.
                    failure = error
                    break
                }
            }
            if !replacements.isEmpty {
                let writes = replacements
                resealed += try await write("reseal") { connection in try TokenTable.replace(connection, writes) }
            }
            if let failure { throw failure }
            guard batch.count == Self.resealBatchSize, let last = batch.last else { return resealed }
            after = last.key
        }
    }
}
