public import Logging

/// Requests on behalf of the application installation: anonymous (with the device's token
/// from the client credentials grant) and unauthenticated (no token, still pinned, and
/// refused while a debugger is attached when detection is on).
///
/// Obtain it from ``ResourceAccess/deviceClient``.
///
/// ```swift
/// let info = try await access.deviceClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/device/info"))
/// let status = try await access.deviceClient.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/status"))
/// ```
///
/// The device token is obtained on first use and renewed with the same grant when it
/// expires or is rejected. A wrong client secret gives
/// ``AuthError/Kind/clientAuthenticationFailed`` with ``AuthError/requestKind`` `.anonymous`.
public final class DeviceClient: Sendable {
    /// The broker of the device's token.
    public let broker: TokenBroker
    /// The token endpoint of the device client.
    public let endpoint: TokenEndpoint

    private let anonymous: ClientSession
    private let unauthenticated: ClientSession

    init(configuration: ResourceAccess.Configuration, endpoint: TokenEndpoint, sessions: ClientSessionFactory) {
        self.endpoint = endpoint
        let broker = TokenBroker(
            level: .device,
            endpoint: endpoint,
            strategy: configuration.strategies.device ?? ClientCredentialsGrant(scope: configuration.deviceScope),
            store: configuration.tokenStore,
            configuration: configuration.tokenBroker,
            logger: configuration.logger
        )
        self.broker = broker
        let credential: any Middleware =
            switch configuration.anonymousAuthorization {
            case .deviceToken: BearerTokenMiddleware(broker: broker, security: configuration.security)
            case .clientBasic: ClientBasicMiddleware(client: configuration.deviceClient, security: configuration.security)
            }
        self.anonymous = sessions.session(kind: .anonymous, credential: credential)
        self.unauthenticated = sessions.session(kind: .unauthenticated, credential: nil)
    }

    /// Obtains the device token now, rather than on the first anonymous request: a quick
    /// check that the device (client) is registered and its secret is right.
    ///
    /// - Returns: The device token.
    /// - Throws: ``AuthError/Kind/clientAuthenticationFailed`` when the server rejects the
    ///   client, or another ``AuthError``.
    @discardableResult
    public func authenticate() async throws -> OAuth2Token {
        do {
            return try await broker.token().token
        } catch let error as AuthError {
            throw error.with(requestKind: .anonymous)
        }
    }

    /// Sends a request with the device's token (an anonymous request).
    ///
    /// - Parameters:
    ///   - request: The request; its path is relative to the resource base URL.
    ///   - logger: Where this request logs.
    /// - Returns: The response, whatever its status.
    /// - Throws: ``AuthError`` with ``AuthError/requestKind`` `.anonymous`;
    ///   ``RequestError``, ``SecurityError``, ``TransportError``; `CancellationError`.
    public func sendAuthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws
        -> ResourceResponse
    {
        try await anonymous.send(request, logger: logger)
    }

    /// Starts a request with the device's token as an observable task.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The running task.
    /// - Throws: ``RequestError`` for bad input.
    public func startAuthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) throws -> NetworkTask {
        try anonymous.start(request, logger: logger)
    }

    /// Sends a request without a token. It is still pinned, goes only to trusted hosts, and
    /// is refused while a debugger is attached when detection is on.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The response, whatever its status.
    /// - Throws: ``RequestError``, ``SecurityError``, ``TransportError``; `CancellationError`.
    public func sendUnauthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws
        -> ResourceResponse
    {
        try await unauthenticated.send(request, logger: logger)
    }

    /// Starts a request without a token as an observable task.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The running task.
    /// - Throws: ``RequestError`` for bad input.
    public func startUnauthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) throws -> NetworkTask {
        try unauthenticated.start(request, logger: logger)
    }

    func shutdown() async {
        await anonymous.session.shutdown()
        await unauthenticated.session.shutdown()
        await endpoint.session.shutdown()
    }
}
