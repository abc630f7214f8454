// The security issue's `SecurityConfiguration` is the credential policy of everything in
// Auth: tokens, client secrets, challenge answers and filter-set cookies go only where its
// `checkCredentialTarget(_:)` allows (HTTPS, secured, host in the trust set).
extension SecurityConfiguration: CredentialPolicy {}

extension BearerTokenMiddleware {
    /// Creates the middleware.
    ///
    /// - Parameters:
    ///   - broker: The broker whose token is attached.
    ///   - security: The session's secured configuration; tokens go only to its trusted hosts.
    public init(broker: TokenBroker, security: SecurityConfiguration) {
        self.init(broker: broker, policy: security)
    }
}

extension ClientBasicMiddleware {
    /// Creates the middleware.
    ///
    /// - Parameters:
    ///   - client: The client whose id and secret are attached.
    ///   - security: The session's secured configuration; credentials go only to its trusted hosts.
    public init(client: OAuth2ClientCredentials, security: SecurityConfiguration) {
        self.init(client: client, policy: security)
    }
}

extension ChallengeMiddleware {
    /// Creates the middleware.
    ///
    /// - Parameters:
    ///   - provider: Supplies the credentials.
    ///   - security: The session's secured configuration; answers go only to its trusted hosts.
    public init(provider: any ChallengeCredentialProvider, security: SecurityConfiguration) {
        self.init(provider: provider, policy: security)
    }
}

extension ResponseFilterMiddleware {
    /// Creates the middleware.
    ///
    /// - Parameters:
    ///   - filter: The filter.
    ///   - maximumRestarts: How many restarts one request may have (1 by default).
    ///   - security: The session's secured configuration; credential fields the filter sets go
    ///     only to its trusted hosts.
    public init(filter: any ResponseFilter, maximumRestarts: Int = 1, security: SecurityConfiguration) {
        self.init(filter: filter, maximumRestarts: maximumRestarts, policy: security)
    }
}
