import Crypto
import Foundation

/// A PKCE verifier and its S256 challenge (RFC 7636).
struct PKCE: Sendable, Hashable, CustomStringConvertible {
    /// The `code_verifier`: 43 characters of URL-safe base64 from 32 random bytes.
    let verifier: String
    /// The `code_challenge`: `BASE64URL(SHA256(verifier))`.
    let challenge: String
    /// The `code_challenge_method`; always `S256`: `plain` protects nothing.
    let method = "S256"

    /// Creates a fresh verifier from the system's secure random generator.
    init() {
        self.init(verifier: OAuth2Form.base64URL(OAuth2Form.randomBytes(32)))
    }

    /// Creates the challenge for a given verifier (for tests against RFC 7636 Appendix B).
    ///
    /// - Parameter verifier: The verifier, 43–128 characters of `[A-Za-z0-9-._~]`.
    init(verifier: String) {
        self.verifier = verifier
        self.challenge = OAuth2Form.base64URL(SHA256.hash(data: Data(verifier.utf8)))
    }

    /// The method and the challenge, never the verifier.
    var description: String { "PKCE(S256, challenge \(challenge))" }
}

/// The authorization code grant with PKCE (RFC 6749 §4.1, RFC 7636): the user signs in at
/// the authorization server, which redirects back with a code that the client exchanges for
/// tokens.
///
/// The browser step is yours: ``browser`` receives the authorization URL and returns the
/// URL the server redirected to. Courier generates the PKCE verifier (S256) and a random
/// `state`, checks that the redirect carries the same `state` and goes to the configured
/// redirect URI, and turns an error redirect into ``CourierError/Kind/authorizationDenied``.
///
/// ```swift
/// let grant = AuthorizationCodeGrant(redirectURI: URL(string: "http://127.0.0.1:8123/callback")!) { url in
///     try await openBrowserAndWaitForCallback(url)   // returns http://127.0.0.1:8123/callback?code=…&state=…
/// }
/// try await access.userClient.authenticate(with: grant)
/// ```
struct AuthorizationCodeGrant: GrantStrategy {
    /// Shows the authorization URL to the user and returns the redirect URL.
    typealias Browser = @Sendable (_ authorizationURL: URL) async throws -> URL

    /// Where the server redirects to; it must be registered for the client.
    var redirectURI: URL
    /// The scope to ask for; `nil` lets the server choose its default.
    var scope: Set<Scope>?
    /// Extra query parameters for the authorization request (`login_hint`, `prompt`, …).
    var additionalAuthorizationParameters: [(name: String, value: String)]
    /// The browser step.
    var browser: Browser

    /// Creates the grant.
    ///
    /// - Parameters:
    ///   - redirectURI: The registered redirect URI.
    ///   - scope: The scope to ask for.
    ///   - additionalAuthorizationParameters: Extra query parameters for the authorization
    ///     request.
    ///   - browser: Shows the URL and returns the redirect.
    init(
        redirectURI: URL,
        scope: Set<Scope>? = nil,
        additionalAuthorizationParameters: [(name: String, value: String)] = [],
        browser: @escaping Browser
    ) {
        self.redirectURI = redirectURI
        self.scope = scope
        self.additionalAuthorizationParameters = additionalAuthorizationParameters
        self.browser = browser
    }

    /// The authorization URL for one attempt: `response_type=code`, the client id, the
    /// redirect URI, the scope, the state and the S256 challenge, then the extra parameters.
    ///
    /// - Parameters:
    ///   - endpoint: The authorization endpoint.
    ///   - clientID: The client id.
    ///   - state: The state to send.
    ///   - pkce: The verifier and challenge.
    /// - Returns: The URL.
    func authorizationURL(endpoint: URL, clientID: String, state: String, pkce: PKCE) -> URL {
        var parameters: [(name: String, value: String)] = [
            ("response_type", "code"), ("client_id", clientID), ("redirect_uri", redirectURI.absoluteString),
        ]
        if let scope, !scope.isEmpty { parameters.append(("scope", Scope.parameterValue(of: scope))) }
        parameters += [("state", state), ("code_challenge", pkce.challenge), ("code_challenge_method", pkce.method)]
        parameters += additionalAuthorizationParameters
        let query = String(decoding: OAuth2Form.encode(parameters), as: UTF8.self)
        let base = endpoint.absoluteString
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return URL(string: base + separator + query) ?? endpoint
    }

    /// Runs the browser step, checks the redirect and exchanges the code.
    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        guard let authorizationEndpoint = context.endpoint.server.authorizationEndpoint else {
            throw CourierError(
                kind: .missingConfiguration,
                message: "the authorization server has no authorization endpoint",
                level: context.level
            )
        }
        let pkce = PKCE()
        let state = OAuth2Form.base64URL(OAuth2Form.randomBytes(16))
        let url = authorizationURL(
            endpoint: authorizationEndpoint,
            clientID: context.endpoint.client.clientID,
            state: state,
            pkce: pkce
        )
        let redirect = try await browser(url)
        try Task.checkCancellation()
        let code = try Self.code(from: redirect, expectedRedirect: redirectURI, state: state, level: context.level)
        return try await context.endpoint.requestToken(
            grantType: .authorizationCode,
            parameters: [
                ("code", code), ("redirect_uri", redirectURI.absoluteString), ("code_verifier", pkce.verifier),
            ],
            requestedScope: scope
        )
    }

    /// The code of a redirect, after checking where it goes and its state.
    ///
    /// The redirect must have the redirect URI's scheme, host and path (the port may differ
    /// only for a loopback redirect URI without one, RFC 8252 §7.3).
    static func code(
        from redirect: URL,
        expectedRedirect: URL,
        state: String,
        level: AuthorizationLevel
    ) throws
        -> String
    {
        guard let components = URLComponents(url: redirect, resolvingAgainstBaseURL: false),
            let expected = URLComponents(url: expectedRedirect, resolvingAgainstBaseURL: false)
        else {
            throw CourierError(
                kind: .invalidAuthorizationResponse,
                message: "the redirect URL cannot be parsed",
                level: level
            )
        }
        let loopback = ["127.0.0.1", "localhost", "::1", "[::1]"].contains(expected.host ?? "")
        let portMatches = components.port == expected.port || (loopback && expected.port == nil)
        guard components.scheme?.lowercased() == expected.scheme?.lowercased(),
            components.host?.lowercased() == expected.host?.lowercased(),
            components.path == expected.path, portMatches
        else {
            throw CourierError(
                kind: .invalidAuthorizationResponse,
                message: "the redirect does not go to the configured redirect URI",
                level: level
            )
        }
        // Form-decode the query: servers write a space in `error_description` as `+`.
        let items = (components.percentEncodedQuery ?? "").split(separator: "&").map { pair -> URLQueryItem in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map {
                let text = $0.replacingOccurrences(of: "+", with: " ")
                return text.removingPercentEncoding ?? text
            }
            return URLQueryItem(name: parts[0], value: parts.count > 1 ? parts[1] : nil)
        }
        let returnedState = items.first(where: { $0.name == "state" })?.value
        if let error = OAuth2Error(queryItems: items) {
            // An error redirect with the wrong state may be forged; say so rather than trust it.
            guard returnedState == state else {
                throw CourierError(
                    kind: .invalidAuthorizationResponse,
                    message: "an error redirect carried a state that does not match the request",
                    level: level,
                    oauthError: error
                )
            }
            throw CourierError(
                kind: .authorizationDenied,
                message: "the authorization server answered \(error.code)",
                level: level,
                oauthError: error
            )
        }
        guard returnedState == state else {
            throw CourierError(
                kind: .invalidAuthorizationResponse,
                message: returnedState == nil
                    ? "the redirect carries no state"
                    : "the redirect's state does not match the request (possible CSRF)",
                level: level
            )
        }
        guard let code = items.first(where: { $0.name == "code" })?.value, !code.isEmpty else {
            throw CourierError(
                kind: .invalidAuthorizationResponse,
                message: "the redirect carries no code",
                level: level
            )
        }
        return code
    }
}
