import Foundation
import HTTPTypes
import Logging

/// Secured resource access, configured once: the entry point to ``UserClient`` and
/// ``DeviceClient``.
///
/// The clients exist only on a configured instance, so "not configured" cannot happen at
/// run time. Every request of every kind — and every token request — runs on one
/// ``CurlTransport`` that enforces the configuration's ``SecurityConfiguration``: pinned
/// TLS, trusted hosts only.
///
/// ```swift
/// let access = try ResourceAccess(configuration: configuration)
/// try await access.userClient.authenticate(username: "alice", password: "wonderland")
/// let profile = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
/// let status = try await access.deviceClient.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/status"))
/// await access.shutdown()
/// ```
///
/// ### The request kinds and their tokens
///
/// | kind | method | token |
/// | --- | --- | --- |
/// | authenticated | ``UserClient/sendAuthenticatedRequest(_:logger:)`` | the user's, renewed with its refresh token |
/// | implicit | ``UserClient/sendImplicitRequest(_:logger:)`` | the implicit token, exchanged from the user's |
/// | anonymous | ``DeviceClient/sendAuthenticatedRequest(_:logger:)`` | the device's, from client credentials |
/// | unauthenticated | ``DeviceClient/sendUnauthenticatedRequest(_:logger:)`` | none; still pinned, debugger detection applies |
///
/// Each level has one ``TokenBroker``, so concurrent requests share one renewal.
public final class ResourceAccess: Sendable {
    /// The configuration.
    public let configuration: Configuration
    /// User-bound requests: authenticated, implicit, exchanged.
    public let userClient: UserClient
    /// Device-bound requests: anonymous and unauthenticated.
    public let deviceClient: DeviceClient
    /// The transport every request goes through: a ``CurlTransport`` enforcing ``Configuration/security``.
    let transport: any Transport

    /// Configures secured resource access.
    ///
    /// - Parameter configuration: The configuration.
    /// - Throws: ``SecurityError/Kind/invalidConfiguration`` when the security configuration
    ///   is not secured, or the resource gateway or the authorization server is not HTTPS to
    ///   a host of its trust set — nothing would be allowed to carry a token there.
    public convenience init(configuration: Configuration) throws {
        var transportConfiguration = configuration.transport
        transportConfiguration.security = configuration.security
        try self.init(configuration: configuration, transport: CurlTransport(configuration: transportConfiguration))
    }

    /// Configures secured resource access on a given transport (the test seam); the transport
    /// must enforce the configuration's security (``TrustEnforcingTransport``).
    init(configuration: Configuration, transport: any Transport) throws {
        let security = configuration.security
        guard security.isSecured else {
            throw SecurityError(
                kind: .invalidConfiguration,
                message:
                    "secured resource access needs SecurityConfiguration.secured(trust:); the configuration is unpinned"
            )
        }
        var endpoints = [
            ("resource base URL", configuration.resourceBaseURL),
            ("token endpoint", configuration.authorizationServer.tokenEndpoint),
        ]
        if let revocation = configuration.authorizationServer.revocationEndpoint {
            endpoints.append(("revocation endpoint", revocation))
        }
        for (name, url) in endpoints {
            let request = HTTPRequest(method: .get, scheme: url.scheme, authority: Self.authority(of: url), path: "/")
            do {
                try security.checkCredentialTarget(request)
            } catch let error as SecurityError {
                throw SecurityError(
                    kind: .invalidConfiguration,
                    message: "the \(name) \(url.absoluteString) cannot receive credentials: \(error.message)",
                    host: error.host
                )
            }
        }
        self.configuration = configuration

        self.transport = transport

        let logging: [any Middleware] = configuration.logger.map { [LoggingMiddleware(logger: $0)] } ?? []
        func endpoint(_ client: OAuth2ClientCredentials) -> TokenEndpoint {
            TokenEndpoint(
                server: configuration.authorizationServer,
                client: client,
                security: security,
                transport: transport,
                applicationProduct: configuration.applicationProduct,
                middlewares: logging,
                logger: configuration.logger
            )
        }
        let factory = ClientSessionFactory(configuration: configuration, transport: transport, logging: logging)
        self.userClient = UserClient(
            configuration: configuration,
            endpoint: endpoint(configuration.userClient),
            sessions: factory
        )
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

    /// Cancels every request and stops the transport.
    public func shutdown() async {
        await userClient.shutdown()
        await deviceClient.shutdown()
        await transport.shutdown()
    }

    static func authority(of url: URL) -> String? {
        guard let host = url.host, !host.isEmpty else { return nil }
        let bracketed = host.contains(":") ? "[\(host)]" : host
        return url.port.map { "\(bracketed):\($0)" } ?? bracketed
    }
}

/// Makes the session of one request kind: the configuration's middleware, then the kind's
/// credential middleware, then challenge and response filter, on the shared transport.
struct ClientSessionFactory: Sendable {
    let configuration: ResourceAccess.Configuration
    let transport: any Transport
    let logging: [any Middleware]

    func session(kind: RequestKind, credential: (any Middleware)?) -> ClientSession {
        var middlewares: [any Middleware] = [RequestKindMiddleware(kind: kind)] + logging + configuration.middlewares
        if let credential { middlewares.append(credential) }
        if let provider = configuration.challengeCredentialProvider {
            middlewares.append(ChallengeMiddleware(provider: provider, security: configuration.security))
        }
        if let filter = configuration.responseFilter {
            middlewares.append(ResponseFilterMiddleware(filter: filter, security: configuration.security))
        }
        var sessionConfiguration = Session.Configuration(
            baseURL: configuration.resourceBaseURL,
            applicationProduct: configuration.applicationProduct,
            connectTimeout: configuration.connectTimeout,
            timeout: configuration.timeout,
            middlewares: middlewares
        )
        sessionConfiguration.security = configuration.security
        return ClientSession(kind: kind, session: Session(configuration: sessionConfiguration, transport: transport))
    }
}

/// The session of one request kind.
struct ClientSession: Sendable {
    let kind: RequestKind
    let session: Session

    func send(_ request: ResourceRequest, logger: Logger?) async throws -> ResourceResponse {
        do {
            return try await session.send(request, logger: logger)
        } catch let error as AuthError {
            throw error.with(requestKind: kind)
        }
    }

    func start(_ request: ResourceRequest, logger: Logger?) throws -> NetworkTask {
        try session.task(for: request, logger: logger)
    }
}

/// Records the request kind in every ``AuthError`` the chain throws, for `send` and tasks alike.
struct RequestKindMiddleware: Middleware {
    let kind: RequestKind

    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        do {
            return try await next(request, body, context)
        } catch let error as AuthError {
            throw error.with(requestKind: kind)
        }
    }
}
