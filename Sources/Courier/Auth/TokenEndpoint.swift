import CoreMetrics
import Foundation
import HTTPTypes
import Logging
import Tracing

/// The authorization server as a client sees it: token requests (RFC 6749 §3.2), token
/// revocation (RFC 7009), with the client authenticated as configured.
///
/// A token endpoint has its own ``Session``, on the transport the resource requests use —
/// so token traffic is pinned and logged like the rest — but without the auth middleware:
/// a refresh that went through the layer that triggers refreshes would recurse
/// . It has no retry middleware either, and Courier never
/// resends a token request: a resent refresh grant would present a refresh token that
/// rotation has already revoked.
///
/// Every token-endpoint request carries secrets (the client secret, a password, a refresh
/// token, a code), so it goes only where credentials may go: the session must be secured
/// and the authorization server's host must be in its trust set
/// (``SecurityConfiguration/checkCredentialTarget(_:)``). Client authentication is added
/// inside the session's middleware chain, after those checks.
///
/// Grant strategies call ``requestToken(grantType:parameters:requestedScope:)``; a strategy
/// for a server that deviates from RFC 6749 can call ``send(grantType:parameters:)`` and
/// read the response itself.
struct TokenEndpoint: Sendable {
    /// The server's endpoints.
    let server: AuthorizationServer
    /// The client and how it authenticates.
    let client: OAuth2ClientCredentials
    /// The session token requests go through (no auth middleware, no retries).
    let session: Session
    /// Where token-endpoint traffic is logged (the session's logging middleware redacts
    /// credentials; bodies are never logged).
    let logger: Logger?
    /// The key the grants are proven with (DPoP): the client's ``OAuth2ClientCredentials/dpopKey``,
    /// or, for a renewal, the key of the token being renewed (``proving(with:)``); `nil` sends
    /// no proof.
    private(set) var proofKey: DPoPKey?
    /// The servers' DPoP nonces, shared with the resource requests of the same clients.
    let nonces: DPoPNonces
    /// The largest token response read.
    static let maximumResponseBytes = 1 << 20

    /// The longest lifetime an `expires_in` is taken at: ten years. A longer one is read as
    /// ten years; the token is renewed then, or sooner when a resource server rejects it.
    static let maximumLifetimeSeconds: Double = 10 * 365 * 24 * 3600

    /// Creates a token endpoint with a session of its own.
    ///
    /// - Parameters:
    ///   - server: The server's endpoints.
    ///   - client: The client and how it authenticates.
    ///   - transport: The transport to send through, usually the one the resource requests
    ///     use; its ``Transport/security`` must trust the server's host.
    ///   - policy: Where client credentials may go; the transport's security by default.
    ///   - applicationProduct: The product token that opens the User-Agent.
    ///   - middlewares: Middleware to run first (logging, say). Never add a retry or an auth
    ///     middleware here.
    ///   - logger: Where to log; nothing is logged by default.
    ///   - metricsFactory: Where token request metrics go.
    ///   - tracer: Where token request spans go.
    ///   - nonces: The servers' DPoP nonces, shared with the client's resource requests.
    init(
        server: AuthorizationServer,
        client: OAuth2ClientCredentials,
        transport: any Transport,
        policy: (any CredentialPolicy)? = nil,
        applicationProduct: String? = nil,
        middlewares: [any Middleware] = [],
        logger: Logger? = nil,
        metricsFactory: (any MetricsFactory)? = nil,
        tracer: (any Tracer)? = nil,
        nonces: DPoPNonces = DPoPNonces()
    ) {
        let policy = policy ?? transport.security
        self.server = server
        self.client = client
        self.logger = logger
        self.proofKey = client.dpopKey
        self.nonces = nonces
        var configuration = Session.Configuration(
            applicationProduct: applicationProduct,
            maximumRedirects: 0,
            maximumResponseBodySize: Self.maximumResponseBytes,
            middlewares: middlewares + [
                ClientAuthenticationMiddleware(client: client, tokenEndpoint: server.tokenEndpoint, policy: policy),
                CertificateReportMiddleware(),
            ]
        )
        // The broker decides when the token endpoint is asked again (backoff, Retry-After).
        configuration.retryPolicy = .never
        configuration.metricsFactory = metricsFactory
        configuration.tracer = tracer
        self.session = Session(configuration: configuration, transport: transport)
    }

    /// The same endpoint, proving its grants with `key` (`nil`: no proof).
    ///
    /// - Parameter key: The key of the token being renewed, or the client's.
    /// - Returns: The endpoint.
    func proving(with key: DPoPKey?) -> TokenEndpoint {
        var endpoint = self
        endpoint.proofKey = key
        return endpoint
    }

    /// Sends a grant and reads the token response.
    ///
    /// - Parameters:
    ///   - grantType: The `grant_type`.
    ///   - parameters: The grant's other parameters, in order; client authentication is
    ///     added as configured.
    ///   - requestedScope: The scope asked for, recorded as the token's scope when the
    ///     response has none (RFC 6749 §5.1).
    /// - Returns: The token.
    /// - Throws: ``CourierError`` with kind ``CourierError/Kind/tokenRefreshFailed`` when the
    ///   endpoint cannot be reached, answers 429 or 5xx (whatever OAuth error the body names),
    ///   or answers something other than a token or an OAuth error;
    ///   ``CourierError/Kind/clientAuthenticationFailed`` for `invalid_client`,
    ///   ``CourierError/Kind/grantRejected`` for other OAuth errors, and
    ///   ``CourierError/Kind/invalidTokenResponse`` for an unreadable success.
    ///   `CancellationError` when cancelled.
    func requestToken(
        grantType: AuthorizationServer.GrantType,
        parameters: [(name: String, value: String)],
        requestedScope: Set<Scope>? = nil
    ) async throws -> OAuth2Token {
        let response = try await send(grantType: grantType, parameters: parameters)
        return try decodeToken(from: response, requestedScope: requestedScope)
    }

    /// Sends a grant and returns the raw response, whatever its status.
    ///
    /// - Parameters:
    ///   - grantType: The `grant_type`.
    ///   - parameters: The other parameters.
    /// - Returns: The response.
    /// - Throws: ``CourierError/Kind/tokenRefreshFailed`` when the request fails below HTTP.
    func send(
        grantType: AuthorizationServer.GrantType,
        parameters: [(name: String, value: String)]
    ) async throws -> Response {
        try await post(
            to: server.tokenEndpoint,
            parameters: [("grant_type", grantType.rawValue)] + parameters,
            proving: true
        )
    }

    /// Reads a token response (RFC 6749 §5.1) or an error response (§5.2).
    ///
    /// Tolerated deviations: `expires_in` as a numeric string, `scope` as a JSON array, a
    /// missing `token_type` (taken as Bearer). A token type other than Bearer and DPoP is
    /// refused (RFC 6749 §7.1: a client must not use a token whose type it does not
    /// understand), and so is DPoP when no proof was sent, or Bearer when one was and the client
    /// requires DPoP (``OAuth2ClientCredentials/requiresDPoP``). A DPoP token records the
    /// thumbprint of the key it is bound to, and a generated key itself. A token bound to a
    /// client certificate records that certificate's thumbprint: the one its `cnf` claim names
    /// when it is a JWT, else, when the server binds its tokens, the one the connection
    /// presented.
    ///
    /// - Parameters:
    ///   - response: The token endpoint's response.
    ///   - requestedScope: The scope asked for, used when the response has none.
    /// - Returns: The token.
    /// - Throws: ``CourierError``, as ``requestToken(grantType:parameters:requestedScope:)``.
    func decodeToken(from response: Response, requestedScope: Set<Scope>? = nil) throws -> OAuth2Token {
        let endpoint = endpointDescription(server.tokenEndpoint)
        guard response.isSuccessful else { throw failure(response, endpoint: endpoint, action: "token request") }
        guard let object = (try? JSONSerialization.jsonObject(with: response.data)) as? [String: Any] else {
            throw CourierError(
                kind: .invalidTokenResponse,
                message: "the token response is not a JSON object",
                statusCode: response.status.code,
                endpoint: endpoint
            )
        }
        guard let accessToken = object["access_token"] as? String, !accessToken.isEmpty else {
            throw CourierError(
                kind: .invalidTokenResponse,
                message: "the token response has no access_token",
                statusCode: response.status.code,
                endpoint: endpoint
            )
        }
        let tokenType = (object["token_type"] as? String).map(OAuth2Token.TokenType.init(rawValue:)) ?? .bearer
        try checkTokenType(tokenType, status: response.status.code, endpoint: endpoint)
        let issuedAt = Date()
        var expiresIn: Double?
        switch object["expires_in"] {
        case let number as NSNumber: expiresIn = number.doubleValue
        case let text as String: expiresIn = Double(text.trimmingCharacters(in: .whitespaces))
        default: expiresIn = nil
        }
        // "inf", "nan" or 1e999 say nothing usable: no known expiry, as without the field. A
        // finite lifetime is capped, so that every date and duration made from it stays finite.
        if let seconds = expiresIn {
            expiresIn = seconds.isFinite ? min(seconds, Self.maximumLifetimeSeconds) : nil
        }
        var scope = requestedScope
        switch object["scope"] {
        case let text as String: scope = Scope.set(parsing: text)
        case let list as [String]: scope = Set(list.map(Scope.init(rawValue:)))
        default: break
        }
        let known: Set<String> = [
            "access_token", "token_type", "expires_in", "refresh_token", "scope", "issued_token_type",
        ]
        var additional: [String: String] = [:]
        for (name, value) in object where !known.contains(name) {
            switch value {
            case let text as String: additional[name] = text
            case let number as NSNumber: additional[name] = number.stringValue
            default: continue
            }
        }
        var token = OAuth2Token(
            accessToken: accessToken,
            tokenType: tokenType == .dpop ? .dpop : .bearer,
            issuedAt: issuedAt,
            expiresAt: expiresIn.flatMap { $0 >= 0 ? issuedAt.addingTimeInterval($0) : nil },
            refreshToken: (object["refresh_token"] as? String).flatMap { $0.isEmpty ? nil : $0 },
            scope: scope,
            issuedTokenType: object["issued_token_type"] as? String,
            additionalFields: additional
        )
        token.certificateThumbprint =
            CertificateConfirmation.thumbprint(of: accessToken)
            ?? (server.issuesCertificateBoundTokens ? response.clientCertificateThumbprint : nil)
        if tokenType == .dpop, let proofKey {
            token.keyThumbprint = proofKey.thumbprint
            if proofKey.isGenerated { token.generatedKey = StoredDPoPKey(proofKey) }
        }
        return token
    }

    /// Revokes a token (RFC 7009 §2.1).
    ///
    /// The server answers 200 for a token it does not know, so revoking twice is harmless.
    ///
    /// - Parameters:
    ///   - token: The access or refresh token.
    ///   - hint: `access_token` or `refresh_token`, to help the server look it up.
    /// - Throws: ``CourierError/Kind/missingConfiguration`` without a revocation endpoint,
    ///   ``CourierError/Kind/revocationFailed`` when the server refuses or cannot be reached.
    func revoke(_ token: String, hint: TokenTypeHint? = nil) async throws {
        guard let url = server.revocationEndpoint else {
            throw CourierError(
                kind: .missingConfiguration,
                message: "the authorization server has no revocation endpoint"
            )
        }
        var parameters: [(name: String, value: String)] = [("token", token)]
        if let hint { parameters.append(("token_type_hint", hint.rawValue)) }
        let response: Response
        do {
            response = try await post(to: url, parameters: parameters)
        } catch let error as CourierError {
            var error = error
            error = CourierError(
                kind: .revocationFailed,
                message: "revocation request failed",
                endpoint: error.endpoint,
                underlying: error.underlying ?? error
            )
            throw error
        }
        guard response.isSuccessful else {
            let endpoint = endpointDescription(url)
            let cause = failure(response, endpoint: endpoint, action: "revocation")
            throw CourierError(
                kind: .revocationFailed,
                message: "the server refused to revoke the token",
                oauthError: cause.oauthError,
                statusCode: response.status.code,
                endpoint: endpoint,
                underlying: cause
            )
        }
    }

    /// Posts a form with client authentication and, with `proving` and a ``proofKey``, a DPoP
    /// proof — answering one `use_dpop_nonce` challenge with a new proof.
    func post(
        to url: URL,
        parameters: [(name: String, value: String)],
        proving: Bool = false
    ) async throws
        -> Response
    {
        var parameters = parameters
        var fields = HTTPFields()
        fields[.accept] = "application/json"
        fields[.contentType] = "application/x-www-form-urlencoded"
        fields[.cacheControl] = "no-store"
        // With an assertion, ClientAuthenticationMiddleware adds it inside the chain too,
        // fresh for each request.
        if client.assertion == nil {
            switch client.authentication {
            case .basic:
                break  // ClientAuthenticationMiddleware adds it inside the chain, after the checks
            case .body:
                parameters.append(("client_id", client.clientID))
                parameters.append(("client_secret", client.clientSecret ?? ""))
            case .none:
                parameters.append(("client_id", client.clientID))
            }
        }
        let endpoint = endpointDescription(url)
        guard let scheme = url.scheme, let authority = Authority(url: url)?.description else {
            throw CourierError(kind: .missingConfiguration, message: "the endpoint URL \(endpoint) is not absolute")
        }
        var path = url.path.isEmpty ? "/" : url.path
        if let query = url.query { path += "?" + query }
        let request = HTTPRequest(method: .post, scheme: scheme, authority: authority, path: path, headerFields: fields)
        let form = OAuth2Form.encode(parameters)
        do {
            guard proving, let proofKey else {
                return try await session.send(request, body: .data(form), logger: logger)
            }
            return try await sendProven(request, form: form, key: proofKey)
        } catch is CancellationError {
            throw CancellationError()
        } catch let error as CourierError where error.isSecurityFailure || error.kind == .shutDown {
            // Refused on purpose (untrusted host, pin mismatch) or shut down: the kind a user
            // looks for, not a renewal failure to retry.
            throw error.with(endpoint: endpoint)
        } catch {
            throw CourierError(
                kind: .tokenRefreshFailed,
                message: "the request to \(endpoint) failed",
                endpoint: endpoint,
                underlying: error
            )
        }
    }

    /// Sends a token request with a fresh proof of `key`, and once more with a new proof when
    /// the server answers `use_dpop_nonce` with a nonce (RFC 9449 §8). The form is held in
    /// memory, so sending it again is safe; a second challenge goes to the caller.
    private func sendProven(_ request: HTTPRequest, form: Data, key: DPoPKey) async throws -> Response {
        let origin = DPoPProof.origin(of: request)
        guard let target = DPoPProof.targetURI(of: request) else {
            throw CourierError(kind: .missingConfiguration, message: "the token endpoint URL is not absolute")
        }
        var proven = request
        proven.headerFields[.dpop] = try DPoPProof.make(
            key: key,
            method: request.method,
            targetURI: target,
            nonce: nonces.nonce(for: origin)
        )
        let response = try await session.send(proven, body: .data(form), logger: logger)
        let nonce = nonces.remember(from: response.headerFields, origin: origin)
        guard response.status.code == 400, let nonce, OAuth2Error(json: response.data)?.code == .useDPoPNonce else {
            return response
        }
        logger?.debug("the token endpoint asked for a DPoP nonce: sending the request again with it")
        proven.headerFields[.dpop] = try DPoPProof.make(
            key: key,
            method: request.method,
            targetURI: target,
            nonce: nonce
        )
        let answered = try await session.send(proven, body: .data(form), logger: logger)
        nonces.remember(from: answered.headerFields, origin: origin)
        return answered
    }

    /// Checks a token response's `token_type` against what was sent: Bearer or DPoP, DPoP only
    /// for a request with a proof, and Bearer for one with a proof only when the client does not
    /// require DPoP.
    private func checkTokenType(_ tokenType: OAuth2Token.TokenType, status: Int, endpoint: String) throws {
        let proven = proofKey != nil
        let problem: String? =
            switch tokenType {
            case .dpop where !proven: "the server issued a DPoP token, but no DPoP proof was sent"
            case .dpop: nil
            case .bearer where proven && client.requiresDPoP:
                "the server issued a Bearer token for a DPoP proof; the client requires DPoP-bound tokens"
            case .bearer: nil
            default:
                "the token type \(ErrorText.sanitized(tokenType.rawValue)) is not supported; Courier sends Bearer and DPoP tokens"
            }
        guard let problem else { return }
        throw CourierError(kind: .invalidTokenResponse, message: problem, statusCode: status, endpoint: endpoint)
    }

    /// The error for a response that is not a success; it keeps the response, whose
    /// `Retry-After` the broker honours for a 429 or 503.
    ///
    /// The status decides first: a 429 or a 5xx is a renewal that failed
    /// (``CourierError/Kind/tokenRefreshFailed``, backed off and tried again), whatever OAuth
    /// error the body names (`temporarily_unavailable`, say): the server is throttling or
    /// failing, and the grant may well be good. Any other status with an OAuth error is a
    /// refused grant, or a client that could not be authenticated for `invalid_client`.
    func failure(_ response: Response, endpoint: String, action: String) -> CourierError {
        let status = response.status.code
        let oauth = OAuth2Error(json: response.data)
        if status == 429 || (500...599).contains(status) {
            let named = oauth.map { " (\(ErrorText.sanitized($0.code.rawValue)))" } ?? ""
            return CourierError(
                kind: .tokenRefreshFailed,
                message: "the \(action) failed: the server answered \(status)\(named)",
                oauthError: oauth,
                statusCode: status,
                endpoint: endpoint,
                response: response
            )
        }
        if let oauth {
            let kind: CourierError.Kind = oauth.code == .invalidClient ? .clientAuthenticationFailed : .grantRejected
            return CourierError(
                kind: kind,
                message: "the \(action) was refused with \(ErrorText.sanitized(oauth.code.rawValue))",
                oauthError: oauth,
                statusCode: status,
                endpoint: endpoint,
                response: response
            )
        }
        if status == 401 {
            return CourierError(
                kind: .clientAuthenticationFailed,
                message: "the \(action) was refused: the client could not be authenticated",
                statusCode: status,
                endpoint: endpoint
            )
        }
        return CourierError(
            kind: .tokenRefreshFailed,
            message: "the \(action) answered \(status) without an OAuth error",
            statusCode: status,
            endpoint: endpoint,
            response: response
        )
    }

    private func endpointDescription(_ url: URL) -> String {
        "POST \(url.path.isEmpty ? "/" : url.path)"
    }
}

/// The `token_type_hint` of a revocation request (RFC 7009 §2.1).
struct TokenTypeHint: RawRepresentable, Hashable, Sendable {
    /// The hint.
    let rawValue: String

    /// Creates a hint.
    ///
    /// - Parameter rawValue: The hint.
    init(rawValue: String) { self.rawValue = rawValue }

    /// An access token.
    static let accessToken = TokenTypeHint(rawValue: "access_token")
    /// A refresh token.
    static let refreshToken = TokenTypeHint(rawValue: "refresh_token")
}
