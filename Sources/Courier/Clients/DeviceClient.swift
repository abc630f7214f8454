public import Logging

/// Requests on behalf of the application installation: anonymous (with the device's token
/// from the client credentials grant) and unauthenticated (no token, still pinned, and
/// refused while a debugger is attached when detection is on).
///
/// Obtain it from ``ResourceAccess/deviceClient``.
///
/// ```swift
/// let info = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
/// let status = try await access.deviceClient.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/status"))
/// ```
///
/// The device token is obtained on first use and renewed with the same grant when it
/// expires or is rejected. A wrong client secret gives
/// ``CourierError/Kind/clientAuthenticationFailed`` with ``CourierError/requestKind`` `.anonymous`.
public final class DeviceClient: Sendable {
    /// The broker of the device's token.
    let broker: TokenBroker
    /// The token endpoint of the device client.
    let endpoint: TokenEndpoint

    /// Anonymous requests.
    let anonymous: Session
    let unauthenticated: Session

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
            case .deviceToken: BearerTokenMiddleware(broker: broker, policy: sessions.transport.security)
            case .clientBasic:
                ClientBasicMiddleware(client: configuration.deviceClient, policy: sessions.transport.security)
            }
        self.anonymous = sessions.session(kind: .anonymous, credential: credential)
        self.unauthenticated = sessions.session(kind: .unauthenticated, credential: nil)
    }

    /// Obtains the device token now, rather than on the first anonymous request: a quick
    /// check that the device (client) is registered and its secret is right.
    ///
    /// - Returns: The device token.
    /// - Throws: ``CourierError/Kind/clientAuthenticationFailed`` when the server rejects the
    ///   client, or another ``CourierError``.
    @discardableResult
    public func authenticate() async throws -> OAuth2Token {
        try await validToken()
    }

    /// A valid device token for code that is not behind Courier, such as a gRPC or WebSocket
    /// call that carries it itself.
    ///
    /// It comes the way an anonymous request's token does: the current one while it is valid,
    /// otherwise the one renewal in flight, shared with every request and every other caller,
    /// limited and backed off as theirs. Ask for it right before each use rather than keeping
    /// it. When your backend rejects it, pass it back as `rejected`: if it is still the
    /// current token it is renewed, once however many callers report it. With
    /// ``ResourceAccess/AnonymousAuthorization/clientBasic`` anonymous requests carry no token,
    /// but this still obtains the device's token with its grant, for the code that asks.
    ///
    /// - Parameter rejected: A token your backend rejected, or `nil` (the default).
    /// - Returns: The token.
    /// - Throws: ``CourierError`` with ``CourierError/requestKind`` `.anonymous`
    ///   (``CourierError/Kind/clientAuthenticationFailed`` when the server rejects the client);
    ///   `CancellationError` when the caller is cancelled while waiting.
    public func validToken(replacingRejected rejected: OAuth2Token? = nil) async throws -> OAuth2Token {
        do {
            return try await broker.validToken(replacingRejected: rejected).handedOut
        } catch {
            throw anonymous.tagged(error)
        }
    }

    /// Sends an anonymous request: with the device's token (or the device client's id and
    /// secret, see ``ResourceAccess/AnonymousAuthorization``).
    ///
    /// - Parameters:
    ///   - request: The request; its path is relative to the resource base URL.
    ///   - logger: Where this request logs.
    /// - Returns: The response, whatever its status.
    /// - Throws: ``CourierError`` with ``CourierError/requestKind`` `.anonymous`; `CancellationError`.
    public func sendAnonymousRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await anonymous.send(request, logger: logger)
    }

    /// Starts an anonymous request as an observable task.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The running task.
    /// - Throws: ``CourierError`` for bad input.
    public func startAnonymousRequest(_ request: ResourceRequest, logger: Logger? = nil) throws -> NetworkTask {
        try anonymous.task(for: request, logger: logger)
    }

    /// Sends a request without a token. It is still pinned, goes only to trusted hosts, and
    /// is refused while a debugger is attached when detection is on.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The response, whatever its status.
    /// - Throws: ``CourierError`` with ``CourierError/requestKind`` `.unauthenticated`;
    ///   `CancellationError`.
    public func sendUnauthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await unauthenticated.send(request, logger: logger)
    }

    /// Starts a request without a token as an observable task.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The running task.
    /// - Throws: ``CourierError`` for bad input.
    public func startUnauthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) throws -> NetworkTask {
        try unauthenticated.task(for: request, logger: logger)
    }

    /// The sessions resource requests go through.
    var resourceSessions: [Session] { [anonymous, unauthenticated] }

    func shutdown() async {
        await anonymous.shutdown()
        await unauthenticated.shutdown()
        await endpoint.session.shutdown()
    }
}
