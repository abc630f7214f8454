public import Logging

extension Session {
    /// The server-sent events of a resource: an `AsyncSequence` that opens the stream when
    /// iterated and reconnects as the event-stream standard asks.
    ///
    /// ```swift
    /// for try await event in session.events(ResourceRequest(path: "/changes")) {
    ///     print(event.type, event.data)
    /// }
    /// ```
    ///
    /// Each connection goes through the session's middleware chain. The stream's liveness is
    /// watched in whole events (``ServerSentEvents/Configuration/idleTimeout``) instead of the
    /// session's byte stall timeout. ``ResourceRequest/deadline`` bounds the first connection's
    /// head; a reconnection's head is bounded by the session's timeout.
    ///
    /// - Parameters:
    ///   - request: The request each connection sends; `Accept: text/event-stream` is added when
    ///     it names no `Accept`, and `Last-Event-ID` on reconnections.
    ///   - configuration: Event size, idle timeout and reconnection.
    ///   - logger: Where middleware logs for each connection; nothing is logged by default.
    /// - Returns: The events; see ``ServerSentEvents`` for how the stream ends.
    public nonisolated func events(
        _ request: ResourceRequest,
        configuration: ServerSentEvents.Configuration = ServerSentEvents.Configuration(),
        logger: Logger? = nil
    ) -> ServerSentEvents {
        events(request, configuration: configuration, attributes: { RequestAttributes() }, logger: logger)
    }

    /// The server-sent events of a resource, each connection's request carrying the attributes
    /// `attributes` makes.
    nonisolated func events(
        _ request: ResourceRequest,
        configuration: ServerSentEvents.Configuration,
        attributes: @escaping @Sendable () -> RequestAttributes,
        logger: Logger?
    ) -> ServerSentEvents {
        ServerSentEvents(
            request: request,
            configuration: configuration,
            source: ServerSentEvents.Source(session: self, attributes: attributes, logger: logger)
        )
    }
}
