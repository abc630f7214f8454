import HTTPTypes
import Logging

/// Decides whether a credential may be attached to a request: credential confinement
/// (security invariant 1). ``SecurityConfiguration`` is the production policy.
protocol CredentialPolicy: Sendable {
    /// Throws unless a credential may go with `request` (absolute, as it will be sent).
    func checkCredentialTarget(_ request: HTTPRequest) throws
}

extension CredentialPolicy {
    /// Throws unless a credential may be attached to `request`: it must not set
    /// `Authorization` or `DPoP` itself (Courier owns them), and its host must be allowed
    /// credentials. Call it before obtaining the credential, so that nothing is fetched for a
    /// refused host.
    func checkAuthorizable(_ request: HTTPRequest) throws {
        guard request.headerFields[.authorization] == nil else {
            throw CourierError.reservedHeader("Authorization is owned by Courier; a request may not set it")
        }
        guard request.headerFields[.dpop] == nil else {
            throw CourierError.reservedHeader("DPoP is owned by Courier; a request may not set it")
        }
        try checkCredentialTarget(request)
    }
}

/// Attaches the token of a ``TokenBroker`` to each request (RFC 6750 §2.1), and answers a
/// 401 that rejects it by renewing the token once and resending.
///
/// - Before anything is sent, the request's host must be allowed to receive credentials
///   (``SecurityConfiguration/checkCredentialTarget(_:)``): HTTPS, in the trust set. A
///   request that already carries `Authorization` is refused: Courier owns that field.
/// - A 401 whose `WWW-Authenticate` asks for a new bearer token (none, or
///   `Bearer error="invalid_token"`) is reported to the broker with the version of the
///   token that was sent. The broker renews only if that token is still current, so a
///   burst of 401s renews once. The request is then resent once with the new token; a
///   second 401 goes to the caller as the response.
/// - A body that cannot be replayed is not resent: the 401 goes to the caller.
/// - A 401 from another origin than the one the token went to (a redirect led there, and
///   redirects never carry the token across origins) goes to the caller: it renews nothing.
/// - Renewing goes through the broker's token endpoint, which is not behind this
///   middleware: no recursion.
/// - A token bound to a DPoP key goes as `Authorization: DPoP <token>` with a fresh proof of
///   that key for this send (`BearerTokenMiddleware+DPoP.swift`), and never with another key's.
/// - A token bound to a client certificate goes only over a connection presenting it; when the
///   transport presents another one now, the token is renewed first
///   (`BearerTokenMiddleware+Certificate.swift`).
///
/// On the sessions that every user of a ``ResourceAccess`` shares, the middleware holds no
/// broker: each request names its user's broker in ``MiddlewareContext/userCredential``.
struct BearerTokenMiddleware: Middleware {
    /// The broker whose token is attached; `nil` for the request's
    /// ``MiddlewareContext/userCredential``.
    let broker: TokenBroker?
    let policy: any CredentialPolicy

    /// Creates a middleware that attaches the token of `broker`, or, when `broker` is `nil`,
    /// of the broker each request names in its context.
    init(broker: TokenBroker?, policy: any CredentialPolicy) {
        self.broker = broker
        self.policy = policy
    }

    /// Attaches the token, and renews and resends once on a 401 that rejects it.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        try policy.checkAuthorizable(request)
        guard let broker = broker ?? context.userCredential?.broker else {
            // Unreachable: a shared user session is only sent to with a user's credential.
            throw CourierError(kind: .userNotAuthenticated, message: "the request names no user")
        }
        let sent = try await broker.token()
        do {
            return try await send(request, with: sent, from: broker, body: body, context: context, next: next)
        } catch let mismatch as ClientCertificateMismatch {
            return try await resend(
                request,
                refused: mismatch,
                for: sent,
                from: broker,
                body: body,
                context: context,
                next: next
            )
        }
    }

    /// Sends `request` with `sent` — as a bearer token, or with a proof of its DPoP key — and
    /// renews and resends once on a 401 that rejects it.
    func send(
        _ request: HTTPRequest,
        with sent: BrokeredToken,
        from broker: TokenBroker,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        if try Self.isBound(sent, by: broker) {
            return try await sendProven(request, with: sent, from: broker, body: body, context: context, next: next)
        }
        var authorized = request
        authorized.headerFields[.authorization] = sent.authorizationValue
        let response = try await next(authorized, body, context.presenting(certificateOf: sent))
        guard response.status.code == 401, AuthenticationChallenge.asksForNewBearerToken(response.headerFields) else {
            return response
        }
        return try await renew(
            sent,
            rejectedBy: response,
            of: authorized,
            from: broker,
            body: body,
            context: context,
            next: next
        )
    }

    /// Renews the token a 401 `response` rejected and sends `authorized` again with the new one,
    /// or returns the response when resending would not help. Never inlined: its state would
    /// enlarge the frame that every request in flight keeps, rejected or not.
    @inline(never)
    private func renew(
        _ sent: BrokeredToken,
        rejectedBy response: Response,
        of authorized: HTTPRequest,
        from broker: TokenBroker,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        var authorized = authorized
        // A redirect to another origin left the token behind: that origin's 401 says nothing
        // about the token.
        guard response.isFromOrigin(of: authorized) else {
            context.logger.debug("401 from an origin the token was not sent to: not renewing")
            return response
        }
        guard body?.isReplayable ?? true else {
            context.logger.debug("401 for a body that cannot be replayed: not resending")
            return response
        }
        let renewed = try await broker.tokenRejected(sent)
        context.logger.debug("401 for \(broker.level) token v\(sent.version); resending with v\(renewed.version)")
        var retry = context
        retry.attempt += 1
        if try Self.isBound(renewed, by: broker) {
            // The server now issues DPoP-bound tokens: the new one goes with its proof.
            authorized.headerFields[.authorization] = nil
            return try await sendProven(authorized, with: renewed, from: broker, body: body, context: retry, next: next)
        }
        authorized.headerFields[.authorization] = renewed.authorizationValue
        return try await next(authorized, body, retry.presenting(certificateOf: renewed))
    }

    /// Whether `token` must go with a proof of its DPoP key; throws for a token this client may
    /// not send at all (bound to a key it does not hold, or a bearer token where it requires
    /// DPoP), whichever way the broker got it.
    static func isBound(_ token: BrokeredToken, by broker: TokenBroker) throws -> Bool {
        switch broker.binding(of: token.token) {
        case .bearer: return false
        case .key: return true
        case .unusable: throw unusable(token, by: broker)
        }
    }

    /// The error for a token that may not be sent.
    static func unusable(_ token: BrokeredToken, by broker: TokenBroker) -> CourierError {
        let reason =
            token.token.keyThumbprint == nil
            ? "is a bearer token, and the client requires DPoP" : "is bound to a DPoP key this client does not hold"
        return CourierError(
            kind: .userNotAuthenticated,
            message: "the \(broker.level) token \(reason)",
            level: broker.level
        )
    }
}

/// Attaches a client's id and secret as HTTP Basic credentials (RFC 7617), for resource
/// servers that authenticate the client itself rather than a token.
///
/// The same confinement applies as for tokens: HTTPS to trusted hosts only.
struct ClientBasicMiddleware: Middleware {
    private let value: String
    let policy: any CredentialPolicy

    init(client: OAuth2ClientCredentials, policy: any CredentialPolicy) {
        self.value = OAuth2Form.basicCredentials(clientID: client.clientID, clientSecret: client.clientSecret ?? "")
        self.policy = policy
    }

    /// Attaches the credentials.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        try policy.checkAuthorizable(request)
        var authorized = request
        authorized.headerFields[.authorization] = value
        return try await next(authorized, body, context)
    }
}
