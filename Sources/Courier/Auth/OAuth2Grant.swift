public import Foundation

/// An OAuth 2.0 grant: the built-in ones of RFC 6749, RFC 7636 and RFC 8693, or one made from
/// a closure for a server that needs something else.
///
/// ```swift
/// try await access.userClient.authenticate(with: .password(username: "alice", password: secret))
/// try await access.userClient.authenticate(with: .authorizationCode(redirectURI: callback) { url in
///     try await openBrowserAndWaitForCallback(url)   // returns the redirect URL with code and state
/// })
/// configuration.strategies.device = OAuth2Grant.clientCredentials(scope: [.read])
/// ```
public struct OAuth2Grant: GrantStrategy {
    /// Shows the authorization URL to the user and returns the redirect URL.
    public typealias Browser = @Sendable (_ authorizationURL: URL) async throws -> URL
    /// Produces a subject token for an exchange, and its type.
    public typealias TokenSource =
        @Sendable () async throws -> (token: String, type: AuthorizationServer.TokenTypeIdentifier)

    private let strategy: any GrantStrategy

    init(_ strategy: any GrantStrategy) { self.strategy = strategy }

    /// A grant made from a closure, for a server that deviates from the RFCs.
    ///
    /// ```swift
    /// let legacy = OAuth2Grant { context in
    ///     let response = try await context.send(grantType: .clientCredentials, parameters: [("tenant", "acme")])
    ///     return try context.decodeToken(from: response)
    /// }
    /// ```
    ///
    /// - Parameter body: Obtains the token.
    public init(_ body: @escaping @Sendable (GrantContext) async throws -> OAuth2Token) {
        self.strategy = ClosureGrant(body: body)
    }

    /// Runs the grant.
    ///
    /// - Parameter context: The token being replaced, why, and the token endpoint.
    /// - Returns: The new token.
    /// - Throws: ``CourierError`` or `CancellationError`.
    public func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        try await strategy.obtainToken(context)
    }
}

// The built-in grants live on `GrantStrategy` where `Self == OAuth2Grant`, so they read with a
// leading dot wherever a grant is expected (`authenticate(with: .password(...))`) and as
// `OAuth2Grant.password(...)` elsewhere.
extension GrantStrategy where Self == OAuth2Grant {
    /// The resource owner password credentials grant (RFC 6749 §4.3).
    ///
    /// - Parameters:
    ///   - username: The username.
    ///   - password: The password; never logged.
    ///   - scope: The scope to ask for; `nil` lets the server choose.
    /// - Returns: The grant.
    public static func password(username: String, password: String, scope: Set<Scope>? = nil) -> OAuth2Grant {
        OAuth2Grant(PasswordGrant(username: username, password: password, scope: scope))
    }

    /// The client credentials grant (RFC 6749 §4.4): a token for the client itself.
    ///
    /// - Parameters:
    ///   - scope: The scope to ask for.
    ///   - additionalParameters: Extra form parameters (`audience`, …).
    /// - Returns: The grant.
    public static func clientCredentials(
        scope: Set<Scope>? = nil,
        additionalParameters: [(name: String, value: String)] = []
    ) -> OAuth2Grant {
        OAuth2Grant(ClientCredentialsGrant(scope: scope, additionalParameters: additionalParameters))
    }

    /// The refresh token grant (RFC 6749 §6): renews the current token with its refresh
    /// token, keeping the old refresh token when the server sends no new one.
    ///
    /// - Parameter scope: The scope to ask for; `nil` keeps the granted scope.
    /// - Returns: The grant.
    public static func refreshToken(scope: Set<Scope>? = nil) -> OAuth2Grant {
        OAuth2Grant(RefreshTokenGrant(scope: scope))
    }

    /// The authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636), with a fresh `state`
    /// checked on return.
    ///
    /// - Parameters:
    ///   - redirectURI: The registered redirect URI.
    ///   - scope: The scope to ask for.
    ///   - additionalParameters: Extra authorization request parameters (`login_hint`, …).
    ///   - browser: Shows the authorization URL and returns the redirect URL.
    /// - Returns: The grant.
    public static func authorizationCode(
        redirectURI: URL,
        scope: Set<Scope>? = nil,
        additionalParameters: [(name: String, value: String)] = [],
        browser: @escaping OAuth2Grant.Browser
    ) -> OAuth2Grant {
        OAuth2Grant(
            AuthorizationCodeGrant(
                redirectURI: redirectURI,
                scope: scope,
                additionalAuthorizationParameters: additionalParameters,
                browser: browser
            )
        )
    }

    /// The token exchange grant (RFC 8693): trades a subject token for a token with another
    /// scope or audience.
    ///
    /// - Parameters:
    ///   - scope: The scope to ask for.
    ///   - audience: The `audience` values.
    ///   - resource: The `resource` URIs.
    ///   - requestedTokenType: The `requested_token_type`; `nil` for an access token.
    ///   - subject: Produces the subject token when the grant runs.
    /// - Returns: The grant.
    public static func tokenExchange(
        scope: Set<Scope>? = nil,
        audience: [String] = [],
        resource: [URL] = [],
        requestedTokenType: AuthorizationServer.TokenTypeIdentifier? = nil,
        subject: @escaping OAuth2Grant.TokenSource
    ) -> OAuth2Grant {
        OAuth2Grant(
            TokenExchangeGrant(
                scope: scope,
                audience: audience,
                resource: resource,
                requestedTokenType: requestedTokenType,
                subject: subject
            )
        )
    }

    /// A grant of a type the RFCs do not define (RFC 6749 §4.5), such as a SAML bearer
    /// assertion: the grant type and its parameters are sent as they are.
    ///
    /// - Parameters:
    ///   - grantType: The `grant_type` URI.
    ///   - parameters: Its parameters, in order.
    ///   - scope: The scope to ask for.
    /// - Returns: The grant.
    public static func custom(
        grantType: AuthorizationServer.GrantType,
        parameters: [(name: String, value: String)],
        scope: Set<Scope>? = nil
    ) -> OAuth2Grant {
        OAuth2Grant(ExtensionGrant(grantType: grantType, parameters: parameters, scope: scope))
    }
}

/// A grant strategy made from a closure.
struct ClosureGrant: GrantStrategy {
    let body: @Sendable (GrantContext) async throws -> OAuth2Token

    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        try await body(context)
    }
}
