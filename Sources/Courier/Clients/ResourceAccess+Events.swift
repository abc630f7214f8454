public import Logging

// Server-sent events of every kind of request: each connection of the stream carries the same
// token, passes the same trust checks and renews the token the same way as the kind's buffered
// request, so a stream that outlives its token reconnects with a fresh one.

extension UserClient {
    /// The server-sent events of a resource, each connection sent with the user's token.
    ///
    /// ```swift
    /// let feed = access.userClient(for: userID).authenticatedEvents(ResourceRequest(path: "/api/feed"))
    /// for try await event in feed { try await deliver(event.data) }
    /// ```
    ///
    /// A connection that ends or drops reconnects with the last event ID and the user's current
    /// token: one renewed while the stream was open, or renewed on the reconnection's `401`.
    ///
    /// - Parameters:
    ///   - request: The request; its path is relative to the resource base URL.
    ///   - configuration: Event size, idle timeout and reconnection.
    ///   - logger: Where each connection logs.
    /// - Returns: The events; see ``ServerSentEvents`` for how the stream ends. Its errors are
    ///   tagged as ``sendAuthenticatedRequest(_:logger:)``'s are.
    public func authenticatedEvents(
        _ request: ResourceRequest,
        configuration: ServerSentEvents.Configuration = ServerSentEvents.Configuration(),
        logger: Logger? = nil
    ) -> ServerSentEvents {
        shared.authenticated.events(
            request,
            configuration: configuration,
            attributes: { [self] in credential(broker) },
            logger: logger
        )
    }

    /// The server-sent events of a resource, each connection sent with the implicit token; as
    /// ``authenticatedEvents(_:configuration:logger:)``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - configuration: Event size, idle timeout and reconnection.
    ///   - logger: Where each connection logs.
    /// - Returns: The events.
    public func implicitEvents(
        _ request: ResourceRequest,
        configuration: ServerSentEvents.Configuration = ServerSentEvents.Configuration(),
        logger: Logger? = nil
    ) -> ServerSentEvents {
        shared.implicit.events(
            request,
            configuration: configuration,
            attributes: { [self] in credential(implicitBroker) },
            logger: logger
        )
    }
}

extension DeviceClient {
    /// The server-sent events of a resource, each connection sent as an anonymous request (with
    /// the device's token, or the client's credentials, as configured).
    ///
    /// - Parameters:
    ///   - request: The request; its path is relative to the resource base URL.
    ///   - configuration: Event size, idle timeout and reconnection.
    ///   - logger: Where each connection logs.
    /// - Returns: The events; see ``ServerSentEvents`` for how the stream ends.
    public func anonymousEvents(
        _ request: ResourceRequest,
        configuration: ServerSentEvents.Configuration = ServerSentEvents.Configuration(),
        logger: Logger? = nil
    ) -> ServerSentEvents {
        anonymous.events(request, configuration: configuration, logger: logger)
    }

    /// The server-sent events of a resource, each connection sent without a token.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - configuration: Event size, idle timeout and reconnection.
    ///   - logger: Where each connection logs.
    /// - Returns: The events; see ``ServerSentEvents`` for how the stream ends.
    public func unauthenticatedEvents(
        _ request: ResourceRequest,
        configuration: ServerSentEvents.Configuration = ServerSentEvents.Configuration(),
        logger: Logger? = nil
    ) -> ServerSentEvents {
        unauthenticated.events(request, configuration: configuration, logger: logger)
    }
}
