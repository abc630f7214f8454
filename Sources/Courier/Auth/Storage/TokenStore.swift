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

    /// Removes every token of one user of a client, at every level: the logout of that user,
    /// which leaves the tokens of every other user in place.
    ///
    /// A store that keeps the tokens of keyed users (``ResourceAccess/userClient(for:)``)
    /// should implement it; see the default implementation for what it does otherwise.
    ///
    /// - Parameters:
    ///   - clientID: The client id.
    ///   - user: The user's key (``TokenStoreKey/user``), `nil` for the single user of
    ///     ``ResourceAccess/userClient``.
    /// - Throws: ``CourierError`` when the store cannot be written.
    func removeTokens(clientID: String, user: String?) async throws
}

extension TokenStore {
    /// Removes the tokens of one user, for a store that cannot list its keys.
    ///
    /// For the single user (`user == nil`) it calls ``removeTokens(clientID:)``, as logout
    /// always did: every token of the client, keyed users' included. For a keyed user it
    /// removes the ``AuthorizationLevel/user`` and ``AuthorizationLevel/implicit`` tokens;
    /// exchanged tokens are removed by their brokers when the user still has them in memory.
    /// Implement the requirement when your store serves keyed users, as
    /// ``InMemoryTokenStore`` and ``EncryptedFileTokenStore`` do.
    ///
    /// - Parameters:
    ///   - clientID: The client id.
    ///   - user: The user's key, `nil` for the single user.
    /// - Throws: What the store throws.
    public func removeTokens(clientID: String, user: String?) async throws {
        guard let user else {
            try await removeTokens(clientID: clientID)
            return
        }
        for level in [AuthorizationLevel.user, .implicit] {
            try await setToken(nil, for: TokenStoreKey(clientID: clientID, level: level, user: user))
        }
    }
}
