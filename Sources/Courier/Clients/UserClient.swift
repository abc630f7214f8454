public import Foundation
public import Logging

/// Requests on behalf of the user: authenticated (the user's token), implicit (the
/// implicit token), and exchanged (an RFC 8693 token for another scope or audience). Also
/// sign-in and logout.
///
/// Obtain it from ``ResourceAccess/userClient`` for the one user of an app, or from
/// ``ResourceAccess/userClient(for:)`` for each of the many users a service acts for: every
/// user has its own tokens and signs in, renews and logs out on its own, and all of them
/// share the sessions of one ``ResourceAccess``.
///
/// ```swift
/// try await access.userClient.authenticate(username: "alice", password: "wonderland")
/// let profile = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
/// let task = try access.userClient.startImplicitRequest(ResourceRequest(path: "/api/user/profile"))
/// for await event in task.events { … }
/// await access.userClient.logout()
/// ```
///
/// Every response is returned whatever its status (call ``Response/validate(acceptableStatusCodes:)``
/// to make a status an error). Every error is a ``CourierError`` whose
/// ``CourierError/requestKind`` says which kind of request failed —
/// ``CourierError/Kind/userNotAuthenticated`` when there is no user or the user's refresh
/// token was rejected.
public final class UserClient: Sendable {
    /// The broker of the user's token.
    let broker: TokenBroker
    /// The service's key for the user; `nil` for ``ResourceAccess/userClient``.
    let user: String?
    /// What every user of the ``ResourceAccess`` shares.
    let shared: Shared
    /// The brokers derived from the user's token, made on first use; guarded by
    /// the user's stripe of ``derivedLocks`` (never touched without it).
    private nonisolated(unsafe) var derivedState = Derived()

    /// The implicit broker and the exchanged brokers, and the user's identity.
    private struct Derived {
        var implicit: TokenBroker?
        var exchanges: [TokenExchangeRequest: TokenBroker] = [:]
        var identity: UserIdentity?
    }

    /// The user's current identity: the cookies and cached responses of this sign-in.
    var identity: UserIdentity {
        withDerived { derived in
            if let identity = derived.identity { return identity }
            let identity = UserIdentity(keepsCookies: shared.keepsCookies)
            derived.identity = identity
            return identity
        }
    }

    /// The user's cookies now, when users keep cookies (``ResourceAccess/Configuration/keepsCookies``).
    var cookieJar: CookieJar? { identity.cookieJar }

    /// Starts a new identity for the requests that start from now on and lets go of what the
    /// previous one obtained: a request in flight keeps the old one, so what it receives late
    /// is kept where no later request looks.
    private func startNewIdentity() {
        let previous = withDerived { derived -> UserIdentity? in
            defer { derived.identity = nil }
            return derived.identity
        }
        previous?.forget(in: shared.cache)
    }

    /// The token endpoint of the user client.
    var endpoint: TokenEndpoint { shared.endpoint }

    /// The locks of every user's derived brokers, shared by stripes: a user of many costs no
    /// lock (nor its allocation) of its own.
    private static let derivedLocks = (0..<64).map { _ in LockedBox(()) }

    /// Runs `body` with the user's derived brokers, under the user's stripe of the locks.
    private func withDerived<Result>(_ body: (inout Derived) throws -> Result) rethrows -> Result {
        let stripe = Int(bitPattern: UInt(bitPattern: ObjectIdentifier(self).hashValue) >> 4 & 63)
        return try Self.derivedLocks[stripe].withLock { _ in try body(&derivedState) }
    }

    init(user: String?, shared: Shared) {
        self.user = user
        self.shared = shared
        self.broker = TokenBroker(
            level: .user,
            endpoint: shared.endpoint,
            strategy: shared.userRenewal,
            store: shared.store,
            configuration: shared.brokerConfiguration,
            logger: shared.logger,
            user: user
        )
    }

    /// The broker of the implicit token, made on first use.
    var implicitBroker: TokenBroker {
        withDerived { derived in
            if let implicit = derived.implicit { return implicit }
            let userBroker = broker
            let userAccessToken: @Sendable () async throws -> String = {
                try await userBroker.token().token.accessToken
            }
            let implicit = TokenBroker(
                level: .implicit,
                endpoint: shared.endpoint,
                strategy: shared.implicitStrategy
                    ?? TokenExchangeGrant(scope: shared.implicitScope) { (try await userAccessToken(), .accessToken) },
                store: shared.store,
                configuration: shared.brokerConfiguration,
                logger: shared.logger,
                user: user,
                userTokenSource: userAccessToken
            )
            derived.implicit = implicit
            return implicit
        }
    }

    /// Whether one of the user's brokers is renewing or loading a token.
    var hasOperationInFlight: Bool {
        if broker.hasOperationInFlight { return true }
        return withDerived { derived in
            (derived.implicit?.hasOperationInFlight ?? false)
                || derived.exchanges.values.contains { $0.hasOperationInFlight }
        }
    }

    /// What a request of this user carries on the shared session: the broker whose token it
    /// sends, as its one attribute.
    func credential(_ broker: TokenBroker) -> RequestAttributes {
        RequestAttributes(
            UserCredential(broker: broker, user: self, identity: shared.keepsIdentity ? identity : nil)
        )
    }

    // MARK: Sign-in

    /// Signs the user in with a username and password (RFC 6749 §4.3).
    ///
    /// - Parameters:
    ///   - username: The username.
    ///   - password: The password.
    /// - Returns: The user's new token.
    /// - Throws: ``CourierError``: ``CourierError/Kind/grantRejected`` with `invalid_grant` for
    ///   wrong credentials, ``CourierError/Kind/clientAuthenticationFailed`` for a wrong client
    ///   secret.
    @discardableResult
    public func authenticate(username: String, password: String) async throws -> OAuth2Token {
        try await authenticate(
            with: PasswordGrant(username: username, password: password, scope: shared.userScope)
        )
    }

    /// Signs the user in with the authorization code grant and PKCE (RFC 6749 §4.1, RFC 7636).
    ///
    /// - Parameters:
    ///   - redirectURI: The registered redirect URI.
    ///   - additionalParameters: Extra authorization request parameters (`login_hint`, …).
    ///   - browser: Shows the authorization URL and returns the redirect URL.
    /// - Returns: The user's new token.
    /// - Throws: ``CourierError``: ``CourierError/Kind/authorizationDenied``,
    ///   ``CourierError/Kind/invalidAuthorizationResponse`` (wrong state), or a grant error.
    @discardableResult
    public func authorize(
        redirectURI: URL,
        additionalParameters: [(name: String, value: String)] = [],
        browser: @escaping OAuth2Grant.Browser
    ) async throws -> OAuth2Token {
        try await authenticate(
            with: AuthorizationCodeGrant(
                redirectURI: redirectURI,
                scope: shared.userScope,
                additionalAuthorizationParameters: additionalParameters,
                browser: browser
            )
        )
    }

    /// Signs the user in with any grant, such as a custom strategy for a server of your own.
    ///
    /// The previous user token stays until the grant succeeds. The implicit and exchanged
    /// tokens of a previous user are wiped when the grant succeeds.
    ///
    /// ```swift
    /// try await access.userClient.authenticate(with: .password(username: "alice", password: secret))
    /// ```
    ///
    /// - Parameter grant: The grant.
    /// - Returns: The user's new token.
    /// - Throws: ``CourierError`` from the grant, with ``CourierError/requestKind`` `.authenticated`.
    @discardableResult
    public func authenticate(with grant: some GrantStrategy) async throws -> OAuth2Token {
        let token: OAuth2Token
        // The cookies and cached responses of the identity this sign-in may replace go now, and
        // again once the new token is there: a request that starts in between keeps what it
        // receives in an identity of its own, which the second start lets go of.
        startNewIdentity()
        do {
            token = try await broker.authorize(with: grant).token
        } catch {
            throw shared.authenticated.tagged(error)
        }
        startNewIdentity()
        // Tokens derived from the previous identity must not outlive it, in memory or stored.
        if let implicit = withDerived({ $0.implicit }) {
            _ = try? await implicit.wipe()
        } else {
            let key = TokenStoreKey(clientID: endpoint.client.clientID, level: .implicit, user: user)
            try? await shared.store.setToken(nil, for: key)
        }
        for derived in takeExchangeBrokers() { _ = try? await derived.wipe() }
        return token.handedOut
    }

    /// A valid user token for code that is not behind Courier — a gRPC or WebSocket call that
    /// carries the user's token itself.
    ///
    /// It comes the way a request's token does: the current one while it is valid, otherwise
    /// the one renewal in flight, shared with every request and every other caller waiting
    /// for it, limited and backed off as theirs, and through the shared token store when the
    /// ``ResourceAccess/Configuration/tokenStore`` is shared by a fleet. Ask for it right
    /// before each use rather than keeping it: it is valid now.
    ///
    /// ```swift
    /// let token = try await access.userClient(for: userID).validToken()
    /// metadata.addString("Bearer \(token.accessToken)", forKey: "authorization")
    /// ```
    ///
    /// When the other backend rejects the token (its own 401), pass the rejected token back:
    /// if it is still the current one it is renewed, once however many callers report it, and
    /// the new one is returned.
    ///
    /// - Parameter rejected: A token your backend rejected, or `nil` (the default).
    /// - Returns: The token.
    /// - Throws: ``CourierError`` with ``CourierError/requestKind`` `.authenticated`:
    ///   ``CourierError/Kind/userNotAuthenticated`` when no user is signed in or the refresh
    ///   token was rejected, ``CourierError/Kind/excessiveRefresh`` past the renewal limit;
    ///   `CancellationError` when the caller is cancelled while waiting (the renewal goes on
    ///   for the others).
    public func validToken(replacingRejected rejected: OAuth2Token? = nil) async throws -> OAuth2Token {
        do {
            return try await broker.validToken(replacingRejected: rejected).handedOut
        } catch {
            throw shared.authenticated.tagged(error)
        }
    }

    /// The user's token as it is now, without renewing it: to show its expiry and scope.
    /// `nil` when no user is signed in. Code that sends the token elsewhere asks for
    /// ``validToken(replacingRejected:)``.
    ///
    /// - Returns: The token.
    /// - Throws: ``CourierError`` when the token store cannot be read.
    public func currentToken() async throws -> OAuth2Token? {
        do {
            return try await broker.currentToken()?.handedOut
        } catch {
            throw shared.authenticated.tagged(error)
        }
    }

    /// Whether a user token is present (valid, or renewable with its refresh token).
    public var isAuthenticated: Bool {
        get async {
            guard let token = try? await broker.currentToken() else { return false }
            return token.refreshToken != nil || !token.needsRenewal(at: Date())
        }
    }

    // MARK: Requests

    /// Sends a request with the user's token.
    ///
    /// - Parameters:
    ///   - request: The request; its path is relative to the resource base URL.
    ///   - logger: Where this request logs.
    /// - Returns: The response, whatever its status.
    /// - Throws: ``CourierError`` with ``CourierError/requestKind`` `.authenticated`
    ///   (``CourierError/Kind/userNotAuthenticated`` when there is no user); `CancellationError`.
    public func sendAuthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await shared.authenticated.send(request, attributes: credential(broker), logger: logger)
    }

    /// Starts a request with the user's token as an observable task.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The running task; ``NetworkTask/response`` is the HTTP response.
    /// - Throws: ``CourierError`` for bad input, before anything starts.
    public func startAuthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) throws -> NetworkTask {
        try shared.authenticated.task(for: request, attributes: credential(broker), logger: logger)
    }

    /// Sends a request with the implicit token.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The response, whatever its status.
    /// - Throws: As ``sendAuthenticatedRequest(_:logger:)``, with ``CourierError/requestKind``
    ///   `.implicit`.
    public func sendImplicitRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await shared.implicit.send(request, attributes: credential(implicitBroker), logger: logger)
    }

    /// Starts a request with the implicit token as an observable task.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The running task.
    /// - Throws: ``CourierError`` for bad input.
    public func startImplicitRequest(_ request: ResourceRequest, logger: Logger? = nil) throws -> NetworkTask {
        try shared.implicit.task(for: request, attributes: credential(implicitBroker), logger: logger)
    }

    /// Sends a request with a token exchanged from the user's (RFC 8693) for another scope,
    /// audience or resource.
    ///
    /// The exchanged token is kept and renewed like any other, one per distinct exchange,
    /// and wiped at logout.
    ///
    /// ```swift
    /// let response = try await userClient.sendExchangedRequest(
    ///     ResourceRequest(path: "/api/user/profile"),
    ///     exchange: TokenExchangeRequest(scope: [.read], audience: ["courier-gateway"])
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - exchange: The scope, audience and resource to exchange for.
    ///   - logger: Where this request logs.
    /// - Returns: The response, whatever its status.
    /// - Throws: As ``sendAuthenticatedRequest(_:logger:)``.
    public func sendExchangedRequest(
        _ request: ResourceRequest,
        exchange: TokenExchangeRequest,
        logger: Logger? = nil
    ) async throws -> Response {
        try await shared.authenticated.send(request, attributes: credential(exchangeBroker(exchange)), logger: logger)
    }

    /// Starts a request with an exchanged token as an observable task.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - exchange: The scope, audience and resource to exchange for.
    ///   - logger: Where this request logs.
    /// - Returns: The running task.
    /// - Throws: ``CourierError`` for bad input.
    public func startExchangedRequest(
        _ request: ResourceRequest,
        exchange: TokenExchangeRequest,
        logger: Logger? = nil
    ) throws -> NetworkTask {
        try shared.authenticated.task(for: request, attributes: credential(exchangeBroker(exchange)), logger: logger)
    }

    /// The broker of an exchanged token, created on first use.
    func exchangeBroker(_ exchange: TokenExchangeRequest) -> TokenBroker {
        withDerived { derived in
            if let broker = derived.exchanges[exchange] { return broker }
            let userBroker = broker
            let userAccessToken: @Sendable () async throws -> String = {
                try await userBroker.token().token.accessToken
            }
            let exchangeBroker = TokenBroker(
                level: exchange.level,
                endpoint: shared.endpoint,
                strategy: TokenExchangeGrant(
                    scope: exchange.scope,
                    audience: exchange.audience,
                    resource: exchange.resource
                ) { (try await userAccessToken(), .accessToken) },
                store: shared.store,
                configuration: shared.brokerConfiguration,
                logger: shared.logger,
                user: user,
                userTokenSource: userAccessToken
            )
            derived.exchanges[exchange] = exchangeBroker
            return exchangeBroker
        }
    }

    /// Removes the exchanged brokers, returning them: they belong to the identity that ends.
    private func takeExchangeBrokers() -> [TokenBroker] {
        withDerived { derived -> [TokenBroker] in
            let brokers = Array(derived.exchanges.values)
            derived.exchanges.removeAll()
            return brokers
        }
    }

    // MARK: Logout

    /// Signs the user out: wipes every token of the user — user, implicit, exchanged — in
    /// memory and in the store, revokes them at the authorization server (RFC 7009), and calls
    /// ``ResourceAccess/Configuration/onLogout``.
    ///
    /// The tokens are wiped first, so no request sent after `logout()` starts carries them,
    /// and they are wiped even when revocation fails.
    ///
    /// - Returns: What was revoked and what failed.
    @discardableResult
    public func logout() async -> UserClient.LogoutReport {
        var report = UserClient.LogoutReport()
        var tokens: [OAuth2Token] = []
        let implicit = withDerived { $0.implicit }
        for broker in [broker] + (implicit.map { [$0] } ?? []) + takeExchangeBrokers() {
            let current = try? await broker.currentToken()
            do {
                if let wiped = try await broker.wipe() ?? current { tokens.append(wiped) }
            } catch {
                if let current { tokens.append(current) }
                report.failures.append(Self.storeFailure(error))
            }
        }
        do {
            // This user's tokens only — every level, those of brokers not in memory too.
            try await shared.store.removeTokens(clientID: endpoint.client.clientID, user: user)
        } catch {
            report.failures.append(Self.storeFailure(error))
        }
        if endpoint.server.revocationEndpoint != nil {
            var refreshTokens: [String] = []
            for token in tokens {
                if let refresh = token.refreshToken, !refreshTokens.contains(refresh) { refreshTokens.append(refresh) }
            }
            for refresh in refreshTokens { await revoke(refresh, hint: .refreshToken, into: &report) }
            for token in tokens { await revoke(token.accessToken, hint: .accessToken, into: &report) }
        }
        // Once no token is left: a request that started before keeps its identity, whose
        // cookies and cached responses go here, and whatever it receives late stays there.
        startNewIdentity()
        if user == nil { await shared.onLogout?() }
        return report
    }

    private func revoke(_ token: String, hint: TokenTypeHint, into report: inout UserClient.LogoutReport) async {
        do {
            try await endpoint.revoke(token, hint: hint)
            report.revokedTokens += 1
        } catch let error as CourierError {
            report.failures.append(error)
        } catch {
            report.failures.append(
                CourierError(kind: .revocationFailed, message: "revocation failed", underlying: error)
            )
        }
    }

    private static func storeFailure(_ error: any Error) -> CourierError {
        .tokenStore(error, level: nil, "the token store could not be cleared")
    }
}

extension UserClient {
    /// What ``UserClient/logout()`` did.
    public struct LogoutReport: Sendable {
        /// How many tokens the authorization server revoked (refresh and access tokens).
        public var revokedTokens: Int = 0
        /// What failed: revocations the server refused or that could not be sent, a store that
        /// could not be cleared. The tokens were wiped in memory regardless.
        public var failures: [CourierError] = []

        /// Whether everything was wiped and revoked.
        public var isComplete: Bool { failures.isEmpty }
    }
}
