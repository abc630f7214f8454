/// The client credentials grant (RFC 6749 §4.4): a token for the client itself, the device
/// level's default.
///
/// It needs no previous token, so it also serves as the renewal: the device level asks for a
/// new one whenever its token expires or is rejected (the server issues no refresh token).
struct ClientCredentialsGrant: GrantStrategy {
    /// The scope to ask for; `nil` lets the server choose its default.
    var scope: Set<Scope>?
    /// Extra form parameters for servers that want them.
    var additionalParameters: [(name: String, value: String)]

    /// Creates the grant.
    ///
    /// - Parameters:
    ///   - scope: The scope to ask for.
    ///   - additionalParameters: Extra form parameters.
    init(scope: Set<Scope>? = nil, additionalParameters: [(name: String, value: String)] = []) {
        self.scope = scope
        self.additionalParameters = additionalParameters
    }

    /// Requests a token.
    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        var parameters: [(name: String, value: String)] = []
        if let scope, !scope.isEmpty { parameters.append(("scope", Scope.parameterValue(of: scope))) }
        return try await context.endpoint.requestToken(
            grantType: .clientCredentials,
            parameters: parameters + additionalParameters,
            requestedScope: scope
        )
    }
}

/// The resource owner password credentials grant (RFC 6749 §4.3): sign a user in with a
/// username and password.
///
/// Use it only where the client is trusted with the password (a first-party app, a test);
/// prefer ``AuthorizationCodeGrant``. The `description` never shows the password.
struct PasswordGrant: GrantStrategy, CustomStringConvertible {
    /// The username.
    var username: String
    /// The password.
    var password: String
    /// The scope to ask for; `nil` lets the server choose its default.
    var scope: Set<Scope>?

    /// Creates the grant.
    ///
    /// - Parameters:
    ///   - username: The username.
    ///   - password: The password.
    ///   - scope: The scope to ask for.
    init(username: String, password: String, scope: Set<Scope>? = nil) {
        self.username = username
        self.password = password
        self.scope = scope
    }

    /// Requests a token.
    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        var parameters: [(name: String, value: String)] = [("username", username), ("password", password)]
        if let scope, !scope.isEmpty { parameters.append(("scope", Scope.parameterValue(of: scope))) }
        return try await context.endpoint.requestToken(
            grantType: .password,
            parameters: parameters,
            requestedScope: scope
        )
    }

    /// The username, never the password.
    var description: String { "PasswordGrant(\(username), password \(Redaction.placeholder))" }
}

/// The refresh token grant (RFC 6749 §6): renews the current token with its refresh token,
/// the user level's renewal.
///
/// With refresh-token rotation the server returns a new refresh token and revokes the one
/// sent; the broker stores the new token, refresh token included, in one write. A response
/// without a refresh token keeps the previous one, and one without a scope keeps the
/// previous scope (RFC 6749 §5.1).
///
/// Without a current refresh token it throws ``CourierError/Kind/userNotAuthenticated``.
struct RefreshTokenGrant: GrantStrategy {
    /// A narrower scope to ask for; `nil` keeps the granted scope.
    var scope: Set<Scope>?

    /// Creates the grant.
    ///
    /// - Parameter scope: A narrower scope to ask for.
    init(scope: Set<Scope>? = nil) {
        self.scope = scope
    }

    /// Presents the current refresh token.
    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        guard let current = context.current, let refreshToken = current.refreshToken else {
            throw CourierError(
                kind: .userNotAuthenticated,
                message: context.current == nil
                    ? "there is no \(context.level) token: authenticate first"
                    : "the \(context.level) token cannot be renewed: it has no refresh token",
                level: context.level
            )
        }
        var parameters: [(name: String, value: String)] = [("refresh_token", refreshToken)]
        if let scope, !scope.isEmpty { parameters.append(("scope", Scope.parameterValue(of: scope))) }
        var token = try await context.endpoint.requestToken(
            grantType: .refreshToken,
            parameters: parameters,
            requestedScope: scope ?? current.scope
        )
        if token.refreshToken == nil { token.refreshToken = refreshToken }
        return token
    }
}

/// Any grant by its `grant_type` (RFC 6749 §4.5): an extension grant URI such as the JWT
/// bearer grant, or a server's own grant.
///
/// ```swift
/// let grant = ExtensionGrant(grantType: .jwtBearer, parameters: [("assertion", signedJWT)])
/// ```
struct ExtensionGrant: GrantStrategy {
    /// The `grant_type`.
    var grantType: AuthorizationServer.GrantType
    /// The grant's parameters, in order.
    var parameters: [(name: String, value: String)]
    /// The scope to ask for.
    var scope: Set<Scope>?

    /// Creates the grant.
    ///
    /// - Parameters:
    ///   - grantType: The `grant_type`.
    ///   - parameters: The grant's parameters.
    ///   - scope: The scope to ask for.
    init(
        grantType: AuthorizationServer.GrantType,
        parameters: [(name: String, value: String)],
        scope: Set<Scope>? = nil
    ) {
        self.grantType = grantType
        self.parameters = parameters
        self.scope = scope
    }

    /// Requests a token.
    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        var parameters = parameters
        if let scope, !scope.isEmpty { parameters.append(("scope", Scope.parameterValue(of: scope))) }
        return try await context.endpoint.requestToken(
            grantType: grantType,
            parameters: parameters,
            requestedScope: scope
        )
    }
}
