public import Logging

/// Obtains a token from an authorization server: one OAuth 2.0 grant, or any procedure a
/// server needs.
///
/// A ``TokenBroker`` calls its strategy when it needs a new token (none yet, expired, or
/// rejected by a resource server); ``UserClient/authenticate(with:)`` runs a strategy once
/// to sign the user in. Real servers deviate from RFC 6749 — extra parameters, odd error
/// bodies, non-standard expiry fields — so the strategy is the place to adapt, without
/// forking Courier.
///
/// ### Use a built-in grant
///
/// ``ClientCredentialsGrant``, ``PasswordGrant``, ``RefreshTokenGrant``,
/// ``AuthorizationCodeGrant`` (with PKCE), ``TokenExchangeGrant`` and ``ExtensionGrant``.
///
/// ### Implement a strategy
///
/// ```swift
/// struct LegacyGrant: GrantStrategy {
///     func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
///         let response = try await context.endpoint.send(
///             grantType: .clientCredentials, parameters: [("tenant", "acme")])
///         // This server sends `expires` as an absolute Unix time.
///         var token = try context.endpoint.decodeToken(from: response)
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
/// cancel it. Throw ``AuthError``: an `invalid_grant` from a refresh makes the broker wipe
/// the level's tokens.
public protocol GrantStrategy: Sendable {
    /// Obtains a token.
    ///
    /// - Parameter context: The token being replaced, why, and the endpoint to use.
    /// - Returns: The new token. A refresh that returned no new refresh token should return
    ///   the previous one (``RefreshTokenGrant`` does).
    /// - Throws: ``AuthError`` or `CancellationError`.
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
    /// refresh token is what ``RefreshTokenGrant`` presents.
    public let current: OAuth2Token?
    /// Why a token is needed.
    public let reason: Reason
    /// The authorization server, with the client's authentication.
    public let endpoint: TokenEndpoint
    /// Where to log; never log a token.
    public let logger: Logger

    /// Creates a context.
    ///
    /// - Parameters:
    ///   - level: The level.
    ///   - current: The token being replaced.
    ///   - reason: Why a token is needed.
    ///   - endpoint: The token endpoint.
    ///   - logger: Where to log.
    public init(
        level: AuthorizationLevel,
        current: OAuth2Token?,
        reason: Reason,
        endpoint: TokenEndpoint,
        logger: Logger
    ) {
        self.level = level
        self.current = current
        self.reason = reason
        self.endpoint = endpoint
        self.logger = logger
    }
}

/// A grant strategy made from a closure.
///
/// ```swift
/// let strategy = AnyGrantStrategy { context in
///     try await context.endpoint.requestToken(grantType: .clientCredentials, parameters: [("audience", "api")])
/// }
/// ```
public struct AnyGrantStrategy: GrantStrategy {
    private let body: @Sendable (GrantContext) async throws -> OAuth2Token

    /// Creates a strategy.
    ///
    /// - Parameter body: Obtains the token.
    public init(_ body: @escaping @Sendable (GrantContext) async throws -> OAuth2Token) {
        self.body = body
    }

    /// Runs the closure.
    public func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        try await body(context)
    }
}
