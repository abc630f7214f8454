public import CoreMetrics
public import Foundation
public import Logging
public import Tracing

extension ResourceAccess {
    /// Everything secured resource access needs: where the resources and the authorization
    /// server are, how they are pinned, which OAuth 2.0 clients to use, where tokens are kept.
    ///
    /// ```swift
    /// let configuration = ResourceAccess.Configuration(
    ///     resourceBaseURL: URL(string: "https://api.example.com")!,
    ///     authorizationServer: AuthorizationServer(baseURL: URL(string: "https://login.example.com")!),
    ///     transport: .init(security: try .secured(trust: [
    ///         try TrustPolicy(host: "api.example.com", pins: [apiPin, apiBackupPin]),
    ///         try TrustPolicy(host: "login.example.com", pins: [loginPin, loginBackupPin]),
    ///     ])),
    ///     userClient: OAuth2ClientCredentials(clientID: "my-app", clientSecret: secret),
    ///     deviceClient: OAuth2ClientCredentials(clientID: "my-app-device", clientSecret: deviceSecret)
    /// )
    /// ```
    public struct Configuration: Sendable {
        /// Where resource request paths are resolved: the resource gateway.
        public var resourceBaseURL: URL
        /// The authorization server's endpoints.
        public var authorizationServer: AuthorizationServer
        /// The OAuth 2.0 client for user tokens (sign-in, refresh, implicit exchange).
        public var userClient: OAuth2ClientCredentials
        /// The OAuth 2.0 client for device tokens (client credentials).
        public var deviceClient: OAuth2ClientCredentials
        /// The scope asked for at sign-in; `nil` lets the server choose.
        public var userScope: Set<Scope>?
        /// The scope of the implicit token, a subset of the user's (`read` by default).
        public var implicitScope: Set<Scope>?
        /// The scope of the device token; `nil` lets the server choose.
        public var deviceScope: Set<Scope>?
        /// How anonymous requests are authorized: with the device's bearer token (the
        /// default), or with the device client's id and secret as HTTP Basic for resource
        /// servers that authenticate the client itself.
        public var anonymousAuthorization: AnonymousAuthorization
        /// Where tokens are kept; in memory by default. A service that acts for many users on
        /// one host keeps them in `SQLiteTokenStore` (library `CourierSQLite`); a command-line
        /// tool or a device keeps its few in ``EncryptedFileTokenStore``, signed in across
        /// restarts.
        public var tokenStore: any TokenStore
        /// How long before expiry a token is renewed (30 seconds by default). It is capped at
        /// half the token's lifetime, so short-lived tokens are not renewed on every use.
        public var renewalLeeway: Duration
        /// The refresh-loop guard: at most this many renewals of one level within
        /// ``renewalWindow`` (5 by default) for a token that a resource server rejected right
        /// after it was issued (within 10 seconds) — a server that refuses every fresh token.
        /// Past that, requests of the level fail with ``CourierError/Kind/excessiveRefresh``
        /// for 5 seconds; then the level renews again and the guard counts afresh — so a
        /// server that keeps refusing fresh tokens sees at most this many renewals per
        /// 5-second pause. Renewals for expiry or the leeway never count, however short-lived
        /// the tokens.
        public var maximumRenewals: Int
        /// The window of ``maximumRenewals`` (30 seconds by default).
        public var renewalWindow: Duration
        /// With a ``SharedTokenStore`` as ``tokenStore``: how long the process that renews a
        /// token holds the entry's lease (10 seconds by default; longer than a token request
        /// takes). Other processes wait for its token meanwhile; when the holder dies, the lease
        /// times out after this long and another process renews. A process that waited one and
        /// a half times this long renews on its own.
        public var tokenStoreLeaseDuration: Duration
        /// The grant strategies, to adapt to a server that deviates from RFC 6749.
        public var strategies: Strategies
        /// Answers `Basic`/`Digest` challenges of resource servers; `nil` leaves 401s to the caller.
        public var challengeCredentialProvider: (any ChallengeCredentialProvider)?
        /// Looks at resource responses and may restart a request (SAML-style sign-in).
        public var responseFilter: (any ResponseFilter)?
        /// The product token that opens the User-Agent, such as `"MyApp/2.1"`.
        public var applicationProduct: String?
        /// Middleware that runs on resource requests (not on token requests), such as metrics.
        /// The chain is: logging, retry (``retryPolicy``), these, then auth, then challenge,
        /// then the response filter.
        public var middlewares: [any Middleware]
        /// Where Courier logs requests — resource and token endpoint alike — with secrets
        /// redacted; nothing is logged by default.
        public var logger: Logger?
        /// The transport ``ResourceAccess/init(configuration:)`` creates: its
        /// ``CurlTransport/Configuration/security`` is the one place trust is configured, and
        /// it must be secured, with the hosts of ``resourceBaseURL`` and of the authorization
        /// server in its trust set.
        ///
        /// At most 8 connections per host by default: with HTTP/2 each carries up to 100
        /// concurrent requests, and a burst on a cold transport would otherwise open a
        /// connection per waiting request — hundreds of TLS handshakes, some timing out —
        /// before multiplexing takes over. Set `maximumConnectionsPerHost` to `0` for no limit.
        public var transport: CurlTransport.Configuration
        /// The connect timeout of every request.
        public var connectTimeout: Duration?
        /// The longest every request may take until its response is there (see
        /// ``Session/Configuration/timeout``).
        public var timeout: Duration?
        /// The longest a transfer may move no byte (see ``Session/Configuration/stallTimeout``).
        public var stallTimeout: Duration?
        /// The largest response body a buffered request (`send…Request`, `start…Request`)
        /// collects: 128 MiB by default. A larger body fails the request with
        /// ``CourierError/Kind/responseTooLarge``; read such a body with a `stream…Request`,
        /// which holds a chunk at a time.
        public var maximumResponseBodySize: Int
        /// When resource requests are sent again after a failure or a status such as 503
        /// (see ``Session/Configuration/retryPolicy``); ``RetryPolicy/default`` by default.
        /// Token requests are not retried by it.
        public var retryPolicy: RetryPolicy
        /// Called at the end of ``UserClient/logout()`` of ``ResourceAccess/userClient``: clear
        /// what your app cached for the user. Not called for the keyed users of
        /// ``ResourceAccess/userClient(for:)``: whoever logs one out knows which it was.
        public var onLogout: (@Sendable () async -> Void)?
        /// The most keyed users (``ResourceAccess/userClient(for:)``) kept in memory: 10,000 by
        /// default. Past it, the least recently used user that is not in use — no request,
        /// task or renewal in flight, no reference held — is evicted; its tokens stay in
        /// ``tokenStore`` and are read again on its next use. An idle user costs well under
        /// 2 KB, so the default bounds them to about 20 MB.
        public var maximumUsersInMemory: Int
        /// Where request and token metrics go (see <doc:Observability>), or `nil` for the
        /// factory bootstrapped with `MetricsSystem.bootstrap`.
        public var metricsFactory: (any MetricsFactory)?
        /// Where spans go — resource requests, token requests and renewals — or `nil` for the
        /// tracer bootstrapped with `InstrumentationSystem.bootstrap`.
        public var tracer: (any Tracer)?
        /// How long ``ResourceAccess/shutdown(gracePeriod:)``, when run as a service, lets
        /// requests in flight finish before cancelling them (10 seconds by default).
        public var shutdownGracePeriod: Duration
        /// The HTTP cache of every kind of resource request, or `nil` (the default) for none.
        ///
        /// A response to a user's request is kept for that user alone, one to an anonymous
        /// request for the device alone; a response to an unauthenticated request only when a
        /// shared cache could keep it (never `private`, never one that sets a cookie). A user's
        /// entries go with ``UserClient/logout()`` and with each sign-in; a renewed token keeps
        /// them. See <doc:CachingAndCookies>.
        public var cache: HTTPCache?
        /// Whether each user, and the device's anonymous requests, keep cookies: one
        /// ``CookieJar`` per user and one for the device, never shared. `false` by default.
        /// A user's jar is emptied by ``UserClient/logout()`` and by each sign-in; a keyed user
        /// evicted from memory (``maximumUsersInMemory``) loses its cookies. See
        /// <doc:CachingAndCookies>.
        public var keepsCookies: Bool
        /// The jar of unauthenticated requests, or `nil` (the default) for none: they carry no
        /// credential, so they keep no cookie unless you give them a jar of their own.
        public var unauthenticatedCookieJar: CookieJar?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - resourceBaseURL: The resource gateway.
        ///   - authorizationServer: The authorization server.
        ///   - transport: The transport to create, with its secured configuration.
        ///   - userClient: The client for user tokens.
        ///   - deviceClient: The client for device tokens.
        ///   - userScope: The scope asked for at sign-in.
        ///   - implicitScope: The scope of the implicit token (`read`).
        ///   - deviceScope: The scope of the device token.
        ///   - tokenStore: Where tokens are kept (in memory).
        public init(
            resourceBaseURL: URL,
            authorizationServer: AuthorizationServer,
            transport: CurlTransport.Configuration,
            userClient: OAuth2ClientCredentials,
            deviceClient: OAuth2ClientCredentials,
            userScope: Set<Scope>? = nil,
            implicitScope: Set<Scope>? = [.read],
            deviceScope: Set<Scope>? = nil,
            tokenStore: any TokenStore = InMemoryTokenStore()
        ) {
            self.resourceBaseURL = resourceBaseURL
            self.authorizationServer = authorizationServer
            self.userClient = userClient
            self.deviceClient = deviceClient
            self.userScope = userScope
            self.implicitScope = implicitScope
            self.deviceScope = deviceScope
            self.anonymousAuthorization = .deviceToken
            self.tokenStore = tokenStore
            self.renewalLeeway = .seconds(30)
            self.maximumRenewals = 5
            self.renewalWindow = .seconds(30)
            self.tokenStoreLeaseDuration = .seconds(10)
            self.strategies = Strategies()
            self.challengeCredentialProvider = nil
            self.responseFilter = nil
            self.applicationProduct = nil
            self.middlewares = []
            self.logger = nil
            self.transport = transport
            self.connectTimeout = .seconds(10)
            self.timeout = .seconds(60)
            self.stallTimeout = .seconds(30)
            self.maximumResponseBodySize = 128 << 20
            self.retryPolicy = .default
            self.onLogout = nil
            self.maximumUsersInMemory = 10_000
            self.metricsFactory = nil
            self.cache = nil
            self.keepsCookies = false
            self.unauthenticatedCookieJar = nil
            self.tracer = nil
            self.shutdownGracePeriod = .seconds(10)
        }
    }

    /// How ``DeviceClient/sendAnonymousRequest(_:logger:)`` authorizes a request.
    public enum AnonymousAuthorization: Sendable, Hashable {
        /// `Authorization: Bearer` with the device token from the client credentials grant.
        case deviceToken
        /// `Authorization: Basic` with the device client's id and secret (RFC 7617).
        case clientBasic
    }

    /// The grant strategy of each level; `nil` keeps Courier's default.
    public struct Strategies: Sendable {
        /// Renews the user token: ``OAuth2Grant/refreshToken(scope:)`` by default.
        public var userRenewal: (any GrantStrategy)?
        /// Obtains the implicit token: by default an RFC 8693 exchange of the user's access
        /// token (``GrantContext/userAccessToken()``) for the implicit scope.
        public var implicit: (any GrantStrategy)?
        /// Obtains the device token: ``OAuth2Grant/clientCredentials(scope:additionalParameters:)``
        /// with the device scope by default.
        public var device: (any GrantStrategy)?

        /// Courier's defaults.
        ///
        /// - Parameters:
        ///   - userRenewal: Renews the user token.
        ///   - implicit: Obtains the implicit token.
        ///   - device: Obtains the device token.
        public init(
            userRenewal: (any GrantStrategy)? = nil,
            implicit: (any GrantStrategy)? = nil,
            device: (any GrantStrategy)? = nil
        ) {
            self.userRenewal = userRenewal
            self.implicit = implicit
            self.device = device
        }
    }
}

extension ResourceAccess.Configuration {
    /// The renewal timing and limits of every token level.
    var tokenBroker: TokenBroker.Configuration {
        TokenBroker.Configuration(
            leeway: renewalLeeway,
            refreshLimit: RefreshLimit(maximumRefreshes: maximumRenewals, window: renewalWindow),
            leaseDuration: tokenStoreLeaseDuration
        )
    }
}
