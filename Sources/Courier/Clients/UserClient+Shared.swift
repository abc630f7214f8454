import Logging

extension UserClient {
    /// What every user of one ``ResourceAccess`` shares, made once: the token endpoint, the
    /// settings of the user's brokers, and one session per kind of user-bound request.
    ///
    /// The sessions' credential middleware holds no broker: each request names its user's
    /// in its ``MiddlewareContext/userCredential``. So a user costs its brokers and tokens,
    /// never a session or a middleware chain, however many users there are.
    final class Shared: Sendable {
        /// The token endpoint of the user client.
        let endpoint: TokenEndpoint
        /// Authenticated and exchanged requests.
        let authenticated: Session
        /// Implicit requests.
        let implicit: Session
        /// Where every user's tokens are kept.
        let store: any TokenStore
        /// Renewal timing and limits of every level.
        let brokerConfiguration: TokenBroker.Configuration
        /// Renews a user's token.
        let userRenewal: any GrantStrategy
        /// Obtains a user's implicit token; `nil` for the default exchange.
        let implicitStrategy: (any GrantStrategy)?
        /// The scope asked for at sign-in.
        let userScope: Set<Scope>?
        /// The scope of the implicit token.
        let implicitScope: Set<Scope>?
        /// Where brokers log.
        let logger: Logger?
        /// Called after the single user's logout.
        let onLogout: (@Sendable () async -> Void)?
        /// Whether each user keeps cookies.
        let keepsCookies: Bool
        /// The cache of every kind of request, partitioned by user.
        let cache: HTTPCache?
        /// Whether a user's requests keep anything per sign-in: cookies, or cached responses.
        var keepsIdentity: Bool { keepsCookies || cache != nil }

        init(configuration: ResourceAccess.Configuration, endpoint: TokenEndpoint, sessions: ClientSessionFactory) {
            self.endpoint = endpoint
            let policy = sessions.transport.security
            self.authenticated = sessions.session(
                kind: .authenticated,
                credential: BearerTokenMiddleware(broker: nil, policy: policy)
            )
            self.implicit = sessions.session(
                kind: .implicit,
                credential: BearerTokenMiddleware(broker: nil, policy: policy)
            )
            self.store = configuration.tokenStore
            self.brokerConfiguration = configuration.tokenBroker
            self.userRenewal = configuration.strategies.userRenewal ?? RefreshTokenGrant()
            self.implicitStrategy = configuration.strategies.implicit
            self.userScope = configuration.userScope
            self.implicitScope = configuration.implicitScope
            self.logger = configuration.logger
            self.onLogout = configuration.onLogout
            self.keepsCookies = configuration.keepsCookies
            self.cache = configuration.cache
        }

        /// Cancels every user-bound request and stops the token endpoint's session.
        func shutdown() async {
            await authenticated.shutdown()
            await implicit.shutdown()
            await endpoint.session.shutdown()
        }
    }
}
