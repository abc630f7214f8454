import Foundation
import HTTPTypes
import Logging

/// Secured resource access, configured once: the entry point to ``UserClient`` and
/// ``DeviceClient``.
///
/// The clients exist only on a configured instance, so "not configured" cannot happen at
/// run time. Every request of every kind — and every token request — runs on one transport
/// whose ``Transport/security`` is secured: HTTPS to the hosts of its trust set only, pinned
/// unless a policy explicitly trusts the system's roots.
///
/// ```swift
/// let access = try ResourceAccess(configuration: configuration)
/// try await access.userClient.authenticate(username: "alice", password: "wonderland")
/// let profile = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
/// let status = try await access.deviceClient.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/status"))
/// await access.shutdown()
/// ```
///
/// A service that acts for many users gets each one's client with ``userClient(for:)``, keyed
/// by its own id for the user; see <doc:ServingManyUsers>.
///
/// ### The request kinds and their tokens
///
/// | kind | method | token |
/// | --- | --- | --- |
/// | authenticated | ``UserClient/sendAuthenticatedRequest(_:logger:)`` | the user's, renewed with its refresh token |
/// | implicit | ``UserClient/sendImplicitRequest(_:logger:)`` | the implicit token, exchanged from the user's |
/// | anonymous | ``DeviceClient/sendAnonymousRequest(_:logger:)`` | the device's, from client credentials |
/// | unauthenticated | ``DeviceClient/sendUnauthenticatedRequest(_:logger:)`` | none; still pinned, debugger detection applies |
///
/// Each kind has a `start…Request` twin that returns an observable ``NetworkTask``. Each
/// token level renews through one broker, so concurrent requests share one renewal.
///
/// ### Test your code without a network
///
/// Give a `MockTransport` from `CourierTesting` that reports a secured configuration; it
/// never connects, so every check above runs and nothing leaves the process:
///
/// ```swift
/// let transport = MockTransport(security: try .secured(trust: [gatewayPolicy, loginPolicy])) { request, _ in
///     ...
/// }
/// let access = try ResourceAccess(configuration: configuration, transport: transport)
/// ```
public final class ResourceAccess: Sendable {
    /// The configuration.
    public let configuration: Configuration
    /// User-bound requests: authenticated, implicit, exchanged.
    public let userClient: UserClient
    /// Device-bound requests: anonymous and unauthenticated.
    public let deviceClient: DeviceClient
    /// The keyed users in memory (``userClient(for:)``).
    let users: UserRegistry
    /// What the single user and every keyed user share.
    private let userShared: UserClient.Shared
    /// The transport every request goes through; its ``Transport/security`` is secured.
    public let transport: any Transport
    private let ownsTransport: Bool

    /// Configures secured resource access on a new ``CurlTransport`` made from
    /// ``Configuration/transport``, which ``shutdown()`` stops.
    ///
    /// - Parameter configuration: The configuration.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the transport's security is not
    ///   secured, or the resource gateway or the authorization server is not HTTPS to a host
    ///   of its trust set — nothing would be allowed to carry a token there; also for a
    ///   `client_secret_jwt` client without a secret, a client whose method the authorization
    ///   server's ``AuthorizationServer/supportedClientAuthentications`` does not list, and
    ///   client Basic for anonymous requests with a device client that signs assertions.
    public convenience init(configuration: Configuration) throws {
        try self.init(
            configuration: configuration,
            transport: CurlTransport(configuration: configuration.transport),
            ownsTransport: true
        )
    }

    /// Configures secured resource access on a transport you give, and keep running after
    /// ``shutdown()``: a transport shared with other code, or a test double.
    ///
    /// ``Configuration/transport`` is not used: the transport's own settings and
    /// ``Transport/security`` apply. Tokens go wherever that security allows, so give a
    /// ``CurlTransport`` (or a transport that, like it, enforces its security on every
    /// connection), or a test double that never connects — see ``Transport/security``.
    ///
    /// - Parameters:
    ///   - configuration: The configuration.
    ///   - transport: The transport; its security must be secured.
    /// - Throws: As ``init(configuration:)``.
    public convenience init(configuration: Configuration, transport: any Transport) throws {
        try self.init(configuration: configuration, transport: transport, ownsTransport: false)
    }

    private init(configuration: Configuration, transport: any Transport, ownsTransport: Bool) throws {
        let security = transport.security
        guard security.isSecured else {
            throw CourierError.invalidConfiguration(
                "secured resource access needs a transport with SecurityConfiguration.secured(trust:); "
                    + "this one is unpinned"
            )
        }
        guard configuration.maximumResponseBodySize >= 0 else {
            throw CourierError.invalidConfiguration(
                "maximumResponseBodySize is \(configuration.maximumResponseBodySize); it must be 0 or more"
            )
        }
        if configuration.anonymousAuthorization == .clientBasic, configuration.deviceClient.assertion != nil {
            // A JWT client's secret, if it has one, is for signing: it is never sent as is.
            throw CourierError.invalidConfiguration(
                "anonymous requests with client Basic need a client secret sent as is; the device client "
                    + "\(configuration.deviceClient.clientID) authenticates with "
                    + "\(configuration.deviceClient.method): use .deviceToken"
            )
        }
        for client in [configuration.userClient, configuration.deviceClient] {
            try client.validate()
            if let supported = configuration.authorizationServer.supportedClientAuthentications, !supported.isEmpty,
                client.method != OAuth2ClientCredentials.AuthenticationMethod.none,
                !supported.contains(client.method)
            {
                throw CourierError.invalidConfiguration(
                    "the client \(client.clientID) authenticates with \(client.method), which the "
                        + "authorization server does not support (it lists "
                        + "\(supported.map(\.rawValue).sorted().joined(separator: ", ")))"
                )
            }
        }
        var endpoints = [
            ("resource base URL", configuration.resourceBaseURL),
            ("token endpoint", configuration.authorizationServer.tokenEndpoint),
        ]
        if let revocation = configuration.authorizationServer.revocationEndpoint {
            endpoints.append(("revocation endpoint", revocation))
        }
        for (name, url) in endpoints {
            do {
                try security.checkCredentialTarget(url)
            } catch let error as CourierError {
                throw CourierError.invalidConfiguration(
                    "the \(name) \(ErrorText.url(url)) cannot receive credentials: \(error.message)",
                    host: error.host
                )
            }
        }
        self.configuration = configuration
        self.transport = transport
        self.ownsTransport = ownsTransport

        let logging: [any Middleware] = configuration.logger.map { [LoggingMiddleware(logger: $0)] } ?? []
        // One table of DPoP nonces for every client: a server's nonce serves all of them.
        let nonces = DPoPNonces()
        func endpoint(_ client: OAuth2ClientCredentials) -> TokenEndpoint {
            TokenEndpoint(
                server: configuration.authorizationServer,
                client: client,
                transport: transport,
                applicationProduct: configuration.applicationProduct,
                middlewares: logging,
                logger: configuration.logger,
                metricsFactory: configuration.metricsFactory,
                tracer: configuration.tracer,
                nonces: nonces
            )
        }
        let factory = ClientSessionFactory(configuration: configuration, transport: transport, logging: logging)
        let userShared = UserClient.Shared(
            configuration: configuration,
            endpoint: endpoint(configuration.userClient),
            sessions: factory
        )
        self.userShared = userShared
        self.userClient = UserClient(user: nil, shared: userShared)
        self.users = UserRegistry(maximumCount: configuration.maximumUsersInMemory) { key in
            UserClient(user: key, shared: userShared)
        }
        self.deviceClient = DeviceClient(
            configuration: configuration,
            endpoint: endpoint(configuration.deviceClient),
            sessions: factory
        )
    }

    /// Configures secured resource access for the duration of `body`, then shuts it down.
    ///
    /// - Parameters:
    ///   - configuration: The configuration.
    ///   - isolation: The caller's actor.
    ///   - body: Uses the instance.
    /// - Returns: What `body` returns.
    /// - Throws: What the initializer or `body` throws.
    public static func withResourceAccess<Result>(
        configuration: Configuration,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (ResourceAccess) async throws -> Result
    ) async throws -> Result {
        let access = try ResourceAccess(configuration: configuration)
        do {
            let result = try await body(access)
            await access.shutdown()
            return result
        } catch {
            await access.shutdown()
            throw error
        }
    }

    /// Refuses new requests at once, lets the requests in flight finish for up to
    /// `gracePeriod`, then shuts down as ``shutdown()`` does, cancelling the rest.
    ///
    /// New requests fail with ``CourierError/Kind/shutDown`` from the moment this is called;
    /// the token requests of the requests in flight still go out until the grace period ends.
    ///
    /// - Parameter gracePeriod: The longest the requests in flight may still take.
    public func shutdown(gracePeriod: Duration) async {
        let sessions = [userShared.authenticated, userShared.implicit] + deviceClient.resourceSessions
        await withTaskGroup(of: Void.self) { group in
            for session in sessions {
                group.addTask { await session.shutdown(gracePeriod: gracePeriod) }
            }
        }
        await shutdown()
    }

    /// Cancels every request and, when this instance created its transport, stops it.
    public func shutdown() async {
        await userShared.shutdown()
        await deviceClient.shutdown()
        if ownsTransport { await transport.shutdown() }
    }
}

/// Makes the session of one request kind: the configuration's middleware, then the kind's
/// credential middleware, then challenge and response filter, on the shared transport.
struct ClientSessionFactory: Sendable {
    let configuration: ResourceAccess.Configuration
    let transport: any Transport
    let logging: [any Middleware]
    /// One retry budget for every session of the client: they all talk to one gateway.
    let retryBudget = RetryBudget()
    /// The cookies of the device's anonymous requests, when the users and the device keep
    /// cookies (``ResourceAccess/Configuration/keepsCookies``).
    let deviceCookieJar: CookieJar?
    /// The cache partition of the device's anonymous requests: this instance's alone, also when
    /// several share one ``HTTPCache`` (a device's token is its own).
    let devicePartition = CachePartition.device()

    init(configuration: ResourceAccess.Configuration, transport: any Transport, logging: [any Middleware]) {
        self.configuration = configuration
        self.transport = transport
        self.logging = logging
        self.deviceCookieJar = configuration.keepsCookies ? CookieJar() : nil
    }

    func session(kind: ResourceAccess.RequestKind, credential: (any Middleware)?) -> Session {
        let security = transport.security
        var middlewares: [any Middleware] = logging + configuration.middlewares
        // The filter sits outside the credential step, so a request it restarts goes through
        // that step again: a fresh DPoP proof (a proof is used once), the current token.
        if let filter = configuration.responseFilter {
            middlewares.append(ResponseFilterMiddleware(filter: filter, policy: security))
        }
        if let credential { middlewares.append(credential) }
        if let provider = configuration.challengeCredentialProvider {
            middlewares.append(ChallengeMiddleware(provider: provider, policy: security))
        }
        var sessionConfiguration = Session.Configuration(
            baseURL: configuration.resourceBaseURL,
            applicationProduct: configuration.applicationProduct,
            connectTimeout: configuration.connectTimeout,
            timeout: configuration.timeout,
            stallTimeout: configuration.stallTimeout,
            maximumResponseBodySize: configuration.maximumResponseBodySize,
            middlewares: middlewares
        )
        sessionConfiguration.retryPolicy = configuration.retryPolicy
        sessionConfiguration.cache = configuration.cache
        applyCredentialState(of: kind, to: &sessionConfiguration)
        sessionConfiguration.metricsFactory = configuration.metricsFactory
        sessionConfiguration.tracer = configuration.tracer
        return Session(
            configuration: sessionConfiguration,
            transport: transport,
            errorTag: kind,
            retryBudget: retryBudget
        )
    }
}

extension ClientSessionFactory {
    /// Where a kind's requests keep cookies and cached responses: a user's request in its
    /// user's jar and cache partition, an anonymous one in the device's, an unauthenticated
    /// one in the jar it was given and in the cache only as a shared cache may keep it.
    func applyCredentialState(of kind: ResourceAccess.RequestKind, to session: inout Session.Configuration) {
        switch kind {
        case .authenticated, .implicit:
            session.cachePartitionOfRequest = { _, context in context.userCredential?.identity?.cachePartition }
            if configuration.keepsCookies {
                session.cookieJarOfRequest = { context in context.userCredential?.identity?.cookieJar }
            }
        case .anonymous:
            let partition = devicePartition
            session.cachePartitionOfRequest = { _, _ in partition }
            session.cookieJar = deviceCookieJar
        case .unauthenticated:
            session.cookieJar = configuration.unauthenticatedCookieJar
        }
    }
}

extension CachePartition {
    /// A new partition for the device's anonymous requests of one ``ResourceAccess``.
    static func device() -> CachePartition {
        CachePartition(credential: "device \(UserIdentity.uniqueNumber())")
    }
}
