public import Courier
import Foundation

extension SQLiteTokenStore {
    /// Copies the tokens of an ``/Courier/EncryptedFileTokenStore`` file into this store: the
    /// move from the file store, for a service that outgrew it.
    ///
    /// Each token is copied under its key only when this store has nothing for that key —
    /// no token and no removal — so what this store already holds is never overwritten, and
    /// running the import again copies nothing twice. Entries the file store removed are not
    /// copied. Everything is written in one transaction: all of it or nothing.
    ///
    /// ```swift
    /// let store = SQLiteTokenStore(path: "/var/lib/my-service/tokens.sqlite")
    /// let copied = try await store.importEntries(fromFileStoreAt: "/var/lib/my-service/tokens.store")
    /// print("copied \(copied) tokens")
    /// ```
    ///
    /// - Parameters:
    ///   - path: The file store's file. A missing file has nothing to copy.
    ///   - keyProvider: The file store's key; by default
    ///     ``/Courier/TokenStoreKeyProvider/keyFile(atPath:)`` at `<path>.key`, as the file store
    ///     has it.
    /// - Returns: How many tokens were copied.
    /// - Throws: ``/Courier/CourierError`` when the file store cannot be read (damaged, another
    ///   key) or this store cannot be written; then nothing was copied.
    public func importEntries(
        fromFileStoreAt path: String,
        keyProvider: TokenStoreKeyProvider? = nil
    ) async throws
        -> Int
    {
        let fileStore = EncryptedFileTokenStore(path: path, keyProvider: keyProvider)
        let readFile = try await fileStore.entriesReader()
        // The file store's read blocks on its lock and the disk: on the writer's thread.
        let entries = try await write("import") { _ in try readFile() }
        var writes: [TokenTable.Write] = []
        for (key, entry) in entries.sorted(by: { $0.key.description < $1.key.description }) {
            guard let token = entry.token else { continue }
            let row = EntryKey(key)
            writes.append(TokenTable.Write(key: row, sealed: try await seal(token, for: row)))
        }
        let batch = writes
        return try await write("import") { connection in
            try TokenTable.insertMissing(connection, batch, now: Date())
        }
    }
}
