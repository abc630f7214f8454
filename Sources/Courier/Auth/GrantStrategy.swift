public import Logging

/// Obtains a token from an authorization server: one OAuth 2.0 grant, or any procedure a
/// server needs.
///
/// Courier calls a level's strategy when it needs a new token (none yet, expired, or rejected
/// by a resource server); ``UserClient/authenticate(with:)`` runs a strategy once to sign the
/// user in. Real servers deviate from RFC 6749 — extra parameters, odd error
/// bodies, non-standard expiry fields — so the strategy is the place to adapt, without
/// forking Courier.
///
/// ### Use a built-in grant
///
/// ``OAuth2Grant``: client credentials, password, refresh token, authorization code with
/// PKCE, token exchange, and grants of your own type.
///
/// ### Implement a strategy
///
/// ```swift
/// struct LegacyGrant: GrantStrategy {
///     func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
///         let response = try await context.send(
///             grantType: .clientCredentials, parameters: [("tenant", "acme")])
///         // This server sends `expires` as an absolute Unix time.
///         var token = try context.decodeToken(from: response)
///         if let expires = token.additionalFields["expires"].flatMap(Double.init) {
///             token.expiresAt = Date(timeIntervalSince1970: expires)
///         }
///         return token
///     }
/// }
/// ```
///
/// A strategy is called at most once at a time per broker, and all callers waiting for a
/// token share its result. It runs in a task of its own, so a cancelled caller does not
/// cancel it. Throw ``CourierError``: an `invalid_grant` from a refresh makes the broker wipe
/// the level's tokens.
public protocol GrantStrategy: Sendable {
    /// Obtains a token.
    ///
    /// - Parameter context: The token being replaced, why, and the endpoint to use.
    /// - Returns: The new token. A refresh that returned no new refresh token should return
    ///   the previous one (``OAuth2Grant/refreshToken(scope:)`` does).
    /// - Throws: ``CourierError`` or `CancellationError`.
    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token
}

/// What a ``GrantStrategy`` is given.
public struct GrantContext: Sendable {
    /// Why a token is needed.
    public enum Reason: String, Sendable, Hashable {
        /// There is no token at this level.
        case noToken
        /// The token has expired or expires within the broker's leeway.
        case expired
        /// A resource server rejected the token (401).
        case rejected
        /// The app asked for this grant (a sign-in).
        case requested
    }

    /// The level the token is for.
    public let level: AuthorizationLevel
    /// The token being replaced, if any. It may have expired or have been rejected; its
    /// refresh token is what ``OAuth2Grant/refreshToken(scope:)`` presents.
    public let current: OAuth2Token?
    /// Why a token is needed.
    public let reason: Reason
    /// The authorization server, with the client's authentication.
    let endpoint: TokenEndpoint
    /// The user's valid access token, for levels derived from the user (implicit, exchanged).
    let userTokenSource: (@Sendable () async throws -> String)?
    /// Where to log; never log a token.
    public let logger: Logger

    init(
        level: AuthorizationLevel,
        current: OAuth2Token?,
        reason: Reason,
        endpoint: TokenEndpoint,
        logger: Logger,
        userTokenSource: (@Sendable () async throws -> String)? = nil
    ) {
        self.level = level
        self.current = current
        self.reason = reason
        self.endpoint = endpoint
        self.logger = logger
        self.userTokenSource = userTokenSource
    }

    /// Sends a grant to the token endpoint, with the client's authentication, and reads the
    /// token response (RFC 6749 §5).
    ///
    /// - Parameters:
    ///   - grantType: The `grant_type`.
    ///   - parameters: The grant's other parameters, in order.
    ///   - requestedScope: The scope asked for, recorded as the token's scope when the
    ///     response has none.
    /// - Returns: The token.
    /// - Throws: ``CourierError``: ``CourierError/Kind/clientAuthenticationFailed``,
    ///   ``CourierError/Kind/grantRejected``, ``CourierError/Kind/invalidTokenResponse`` or
    ///   ``CourierError/Kind/tokenRefreshFailed``; a security kind (``CourierError/Kind/pinMismatch``,
    ///   ``CourierError/Kind/untrustedHost``) when the token endpoint may not be reached.
    public func requestToken(
        grantType: AuthorizationServer.GrantType,
        parameters: [(name: String, value: String)],
        requestedScope: Set<Scope>? = nil
    ) async throws -> OAuth2Token {
        try await endpoint.requestToken(grantType: grantType, parameters: parameters, requestedScope: requestedScope)
    }

    /// Sends a grant and returns the raw response, for a server whose answers need reading
    /// by hand; see ``decodeToken(from:requestedScope:)``.
    ///
    /// - Parameters:
    ///   - grantType: The `grant_type`.
    ///   - parameters: The grant's other parameters, in order.
    /// - Returns: The token endpoint's response, whatever its status.
    /// - Throws: ``CourierError/Kind/tokenRefreshFailed`` when the endpoint cannot be reached.
    public func send(
        grantType: AuthorizationServer.GrantType,
        parameters: [(name: String, value: String)]
    ) async throws -> Response {
        try await endpoint.send(grantType: grantType, parameters: parameters)
    }

    /// Reads a token response: a token from a success, the OAuth error otherwise.
    ///
    /// - Parameters:
    ///   - response: The token endpoint's response.
    ///   - requestedScope: The scope asked for.
    /// - Returns: The token.
    /// - Throws: ``CourierError`` as for ``requestToken(grantType:parameters:requestedScope:)``.
    public func decodeToken(from response: Response, requestedScope: Set<Scope>? = nil) throws -> OAuth2Token {
        try endpoint.decodeToken(from: response, requestedScope: requestedScope)
    }

    /// The user's valid access token (renewed first when needed), to present as the subject
    /// of a token exchange for the implicit level or an exchanged token.
    ///
    /// - Returns: The access token.
    /// - Throws: ``CourierError/Kind/missingConfiguration`` for a level not derived from the
    ///   user; the user level's errors (``CourierError/Kind/userNotAuthenticated``, …).
    public func userAccessToken() async throws -> String {
        guard let userTokenSource else {
            throw CourierError(
                kind: .missingConfiguration,
                message: "the \(level) level is not derived from a user",
                level: level
            )
        }
        return try await userTokenSource()
    }
}
