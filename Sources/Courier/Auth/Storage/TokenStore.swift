/// Keeps tokens, by client id and authorization level.
///
/// Courier reads each level's token once, on first use, and writes every token it
/// obtains — with refresh-token rotation the new refresh token replaces the old one in one
/// write. Courier ships ``InMemoryTokenStore`` and ``EncryptedFileTokenStore``.
///
/// ### Implement a store
///
/// Keep each write atomic (a reader sees the old token or the new one, never a mix), and
/// throw rather than return a damaged token:
///
/// ```swift
/// actor KeychainLikeStore: TokenStore {
///     func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
///         try vault.read(key.description).map { try JSONDecoder().decode(OAuth2Token.self, from: $0) }
///     }
///     func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
///         try vault.write(key.description, token.map { try JSONEncoder().encode($0) })
///     }
/// }
/// ```
public protocol TokenStore: Sendable {
    /// The token stored under `key`.
    ///
    /// - Parameter key: Client id and level.
    /// - Returns: The token, or `nil` when there is none.
    /// - Throws: ``CourierError`` when the store cannot be read or is damaged.
    func token(for key: TokenStoreKey) async throws -> OAuth2Token?

    /// Stores a token under `key`, replacing what was there; `nil` removes it.
    ///
    /// - Parameters:
    ///   - token: The token, or `nil`.
    ///   - key: Client id and level.
    /// - Throws: ``CourierError`` when the store cannot be written.
    func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws

    /// Removes every token of a client, at every level (logout).
    ///
    /// - Parameter clientID: The client id.
    /// - Throws: ``CourierError`` when the store cannot be written.
    func removeTokens(clientID: String) async throws
}
