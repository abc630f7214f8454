/// The events of a `text/event-stream` resource, as an `AsyncSequence` that reconnects.
///
/// ```swift
/// for try await event in session.events(ResourceRequest(path: "/changes")) {
///     try apply(event.data)
/// }
/// ```
///
/// Iterating opens the stream; each iteration opens its own. A connection that ends or drops is
/// opened again after the server's `retry` delay (or ``Configuration/reconnectionDelay``), with
/// the last event ID in a `Last-Event-ID` field, through the whole middleware chain: a token that
/// expired while the stream was open is renewed before the reconnection is sent. Attempts that
/// fail in a row back off, with jitter, up to ``Configuration/maximumReconnectionDelay``; after
/// ``Configuration/maximumConsecutiveFailures`` the iteration throws the last failure.
///
/// The stream ends (the iteration returns `nil`) when the server answers `204 No Content`. It
/// throws, for good, when the server answers any other status than `200` (the status's
/// ``CourierError``), a body that is not `text/event-stream`
/// (``CourierError/Kind/undecodableBody``), an event larger than
/// ``Configuration/maximumEventBytes``, or a failure no reconnection can mend (trust, a token
/// that cannot be obtained). Cancelling the iterating task closes the connection at once.
public struct ServerSentEvents: AsyncSequence, Sendable {
    /// An event.
    public typealias Element = ServerSentEvent

    /// The request each connection sends, before its `Last-Event-ID`.
    let request: ResourceRequest
    /// How the stream reads and reconnects.
    let configuration: Configuration
    /// Sends each connection's request through the chain of the session or client that made this.
    let source: Source

    /// The events of `request`, each connection sent through `source`.
    init(request: ResourceRequest, configuration: Configuration, source: Source) {
        self.request = request
        self.configuration = configuration
        self.source = source
    }

    /// Creates the iterator, which opens the stream on its first call.
    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(request: request, configuration: configuration, source: source)
    }
}
