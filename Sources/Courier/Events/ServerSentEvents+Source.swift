import Logging

extension ServerSentEvents {
    /// Where the connections of an event stream go: a session's middleware chain, with the
    /// attributes the layer that made the stream attaches to each request (a user's credential).
    struct Source: Sendable {
        /// The session whose chain sends each connection's request.
        let session: Session
        /// The attributes of each request, made anew for each connection.
        let attributes: @Sendable () -> RequestAttributes
        /// Where the chain logs.
        let logger: Logger?

        /// Sends one connection's request; the response's body streams.
        func send(_ request: ResourceRequest) async throws -> Response {
            try await session.send(request, delivery: .events, attributes: attributes(), logger: logger)
        }

        /// `error` as the session's own failures of `request` read: with its endpoint and the
        /// session's tag.
        func failure(_ error: CourierError, of request: ResourceRequest) -> any Error {
            session.failure(error, method: request.method, target: request.path)
        }
    }
}
