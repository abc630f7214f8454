import Foundation

/// The token exchange grant (RFC 8693): trade a subject token — usually the user's access
/// token — for a token with another scope or audience.
///
/// The subject token is fetched when the grant runs, so an exchange always presents a
/// valid token: ``UserClient`` passes its user broker, which renews the user's token first
/// when needed.
///
/// ```swift
/// let grant = TokenExchangeGrant(scope: [.read], audience: ["courier-api"]) {
///     (try await userBroker.token().token.accessToken, .accessToken)
/// }
/// ```
struct TokenExchangeGrant: GrantStrategy {
    /// Produces a subject or actor token and its type.
    typealias TokenSource = @Sendable () async throws -> (token: String, type: AuthorizationServer.TokenTypeIdentifier)

    /// The scope to ask for; `nil` lets the server choose.
    var scope: Set<Scope>?
    /// The `audience` values (repeatable).
    var audience: [String]
    /// The `resource` URIs (repeatable).
    var resource: [URL]
    /// The `requested_token_type`; `nil` lets the server choose (an access token).
    var requestedTokenType: AuthorizationServer.TokenTypeIdentifier?
    /// The subject token.
    var subject: TokenSource
    /// The actor token, for delegation (`act` claim); `nil` for impersonation.
    var actor: TokenSource?

    /// Creates the grant.
    ///
    /// - Parameters:
    ///   - scope: The scope to ask for.
    ///   - audience: The `audience` values.
    ///   - resource: The `resource` URIs.
    ///   - requestedTokenType: The `requested_token_type`.
    ///   - actor: The actor token, for delegation.
    ///   - subject: The subject token.
    init(
        scope: Set<Scope>? = nil,
        audience: [String] = [],
        resource: [URL] = [],
        requestedTokenType: AuthorizationServer.TokenTypeIdentifier? = nil,
        actor: TokenSource? = nil,
        subject: @escaping TokenSource
    ) {
        self.scope = scope
        self.audience = audience
        self.resource = resource
        self.requestedTokenType = requestedTokenType
        self.actor = actor
        self.subject = subject
    }

    /// Fetches the subject (and actor) token and exchanges it.
    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        let subject = try await subject()
        var parameters: [(name: String, value: String)] = [
            ("subject_token", subject.token), ("subject_token_type", subject.type.rawValue),
        ]
        if let actor {
            let actorToken = try await actor()
            parameters += [("actor_token", actorToken.token), ("actor_token_type", actorToken.type.rawValue)]
        }
        if let scope, !scope.isEmpty { parameters.append(("scope", Scope.parameterValue(of: scope))) }
        parameters += audience.map { ("audience", $0) }
        parameters += resource.map { ("resource", $0.absoluteString) }
        if let requestedTokenType { parameters.append(("requested_token_type", requestedTokenType.rawValue)) }
        return try await context.endpoint.requestToken(
            grantType: .tokenExchange,
            parameters: parameters,
            requestedScope: scope
        )
    }
}
