extension ServerSentEvents {
    /// How an event stream reads events, watches its connection and reconnects.
    ///
    /// An event stream is watched in whole events: ``idleTimeout`` counts from the last event or
    /// heartbeat comment, not from the last byte. Its transfer has no byte stall timeout (the
    /// session's ``Session/Configuration/stallTimeout`` applies to other requests): a server that
    /// sends a comment every 45 seconds keeps its stream open for hours, while one that trickles
    /// bytes without ever finishing an event is treated as gone.
    public struct Configuration: Sendable, Hashable {
        /// The most bytes one event may hold while it is read: its data and type so far plus the
        /// line being read, field name included (`data: ` counts). A longer event ends the stream
        /// with ``CourierError/Kind/responseTooLarge``, after the events before it. 1 MiB by
        /// default.
        public var maximumEventBytes: Int
        /// The longest the stream may go without an event, a blank line or a comment before its
        /// connection counts as dead: it is closed and, if the stream reconnects, opened again.
        /// `nil` watches nothing. 2 minutes by default, well above the 15–60 second heartbeats
        /// servers send.
        public var idleTimeout: Duration?
        /// Whether the stream reconnects when its connection ends or drops, as the event-stream
        /// standard asks. A request whose method is not idempotent (a `POST` of a prompt) is never
        /// sent twice, whatever this says: its stream ends with its connection.
        public var reconnects: Bool
        /// The delay before reconnecting until the server sets one with a `retry` field. 3 seconds
        /// by default. The server's `retry` is honoured up to ``maximumReconnectionDelay``.
        public var reconnectionDelay: Duration
        /// The longest delay before a reconnection: the most the backoff grows to after consecutive
        /// failures, and the most a server's `retry` may ask for. 60 seconds by default.
        public var maximumReconnectionDelay: Duration
        /// How many connection attempts in a row may fail before the stream gives up with the last
        /// failure. 5 by default. An attempt fails when it cannot connect, or its connection ends
        /// without a sign of life (an event, a blank line or a comment); each attempt is sent with
        /// the request's retry policy, so a refused connection is tried as any request is before it
        /// counts as one failed attempt.
        public var maximumConsecutiveFailures: Int

        /// Creates an event-stream configuration.
        ///
        /// - Parameters:
        ///   - maximumEventBytes: The most bytes one event may hold while it is read.
        ///   - idleTimeout: The longest the stream may go without an event or comment.
        ///   - reconnects: Whether the stream reconnects when its connection ends.
        ///   - reconnectionDelay: The delay before reconnecting until the server sets one.
        ///   - maximumReconnectionDelay: The longest the backoff grows to.
        ///   - maximumConsecutiveFailures: How many failed attempts in a row end the stream.
        public init(
            maximumEventBytes: Int = 1 << 20,
            idleTimeout: Duration? = .seconds(120),
            reconnects: Bool = true,
            reconnectionDelay: Duration = .seconds(3),
            maximumReconnectionDelay: Duration = .seconds(60),
            maximumConsecutiveFailures: Int = 5
        ) {
            self.maximumEventBytes = maximumEventBytes
            self.idleTimeout = idleTimeout
            self.reconnects = reconnects
            self.reconnectionDelay = reconnectionDelay
            self.maximumReconnectionDelay = maximumReconnectionDelay
            self.maximumConsecutiveFailures = maximumConsecutiveFailures
        }
    }
}
