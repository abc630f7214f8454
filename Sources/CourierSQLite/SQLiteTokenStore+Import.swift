public import Courier
import Foundation

extension SQLiteTokenStore {
    /// Copies tokens from any source the caller can enumerate into this store — another
    /// store, a table of a database of your own — in one transaction.
    ///
    /// Each token is copied under its key only when this store has nothing for that key — no
    /// token and no removal — so what this store already holds is never overwritten, and
    /// running the import again copies nothing twice. When `entries` holds a key twice, its
    /// first token is the one copied. Everything is written in one transaction, flushed to
    /// the disk once: all of it or nothing.
    ///
    /// A call holds all of its tokens in memory and keeps other writers of the store waiting
    /// while it commits, so copy a large store in batches (ten thousand tokens a call take a
    /// fraction of a second): a batch that fails leaves the batches before it in place, and
    /// the same batches run again copy only what is missing.
    ///
    /// ```swift
    /// let store = SQLiteTokenStore(path: "/var/lib/my-service/tokens.sqlite")
    /// let legacy = try await legacyTokens()  // [(user: String, token: OAuth2Token)], from your old store
    /// for start in stride(from: 0, to: legacy.count, by: 10_000) {
    ///     let batch = legacy[start..<min(start + 10_000, legacy.count)]
    ///     try await store.importEntries(batch.lazy.map { entry in
    ///         (key: TokenStoreKey(clientID: "my-service", level: .user, user: entry.user), token: entry.token)
    ///     })
    /// }
    /// ```
    ///
    /// - Parameter entries: The tokens to copy, each with the key to store it under.
    /// - Returns: How many tokens were copied.
    /// - Throws: ``/Courier/CourierError`` when a token cannot be sealed or this store cannot be
    ///   written; then nothing of this call was copied.
    @discardableResult
    public func importEntries(_ entries: some Sequence<(key: TokenStoreKey, token: OAuth2Token)>) async throws -> Int {
        var writes: [TokenTable.Write] = []
        writes.reserveCapacity(entries.underestimatedCount)
        for (key, token) in entries {
            let row = EntryKey(key)
            writes.append(TokenTable.Write(key: row, sealed: try await seal(token, for: row)))
        }
        let batch = writes
        return try await write("import") { connection in
            try TokenTable.insertMissing(connection, batch, now: Date())
        }
    }

    /// Copies the tokens of an ``/Courier/EncryptedFileTokenStore`` file into this store: the
    /// move from the file store, for a service that outgrew it.
    ///
    /// As ``importEntries(_:)``: each token is copied only when this store has nothing for its
    /// key, and everything is written in one transaction. Entries the file store removed are
    /// not copied.
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
        let tokens = entries.sorted { $0.key.description < $1.key.description }.compactMap { key, entry in
            entry.token.map { (key: key, token: $0) }
        }
        return try await importEntries(tokens)
    }
}
