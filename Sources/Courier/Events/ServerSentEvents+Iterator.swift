import HTTPTypes

extension ServerSentEvents {
    /// Reads the events of one stream, reconnecting as ``ServerSentEvents`` describes.
    public struct AsyncIterator: AsyncIteratorProtocol {
        /// The request each connection sends, before its `Last-Event-ID`.
        private let request: ResourceRequest
        /// How the stream reads and reconnects.
        private let configuration: Configuration
        /// Sends a connection's request.
        private let source: Source
        /// The parser of the open connection; its last event ID and retry carry over to the next.
        private var parser: ServerSentEventParser
        /// The open connection's body and its iterator, or `nil` between connections.
        private var body: Response.Body?
        private var chunks: Response.Body.AsyncIterator?
        /// Watches the open connection for idleness.
        private var watchdog: EventStreamWatchdog?
        /// Events parsed and not yet returned, from `delivered` on.
        private var events: [ServerSentEvent] = []
        private var delivered = 0
        /// How many connections were attempted.
        private var attempts = 0
        /// How many attempts in a row failed or ended without an event.
        private var failures = 0
        /// Whether the open connection delivered an event.
        private var connectionDelivered = false
        /// Whether the stream is over: nothing but the events already parsed is left.
        private var finished = false

        init(request: ResourceRequest, configuration: Configuration, source: Source) {
            self.request = request
            self.configuration = configuration
            self.source = source
            parser = ServerSentEventParser(maximumEventBytes: configuration.maximumEventBytes)
        }

        /// The next event, or `nil` when the stream is over.
        ///
        /// - Throws: A ``CourierError`` that ended the stream for good, or `CancellationError`
        ///   when the task was cancelled.
        public mutating func next() async throws -> ServerSentEvent? {
            while true {
                if delivered < events.count {
                    delivered += 1
                    return events[delivered - 1]
                }
                events.removeAll(keepingCapacity: true)
                delivered = 0
                if finished { return nil }
                if chunks == nil {
                    try await open()
                } else {
                    try await read()
                }
            }
        }

        /// Opens a connection, after the reconnection delay when it is not the first.
        private mutating func open() async throws {
            if attempts > 0 { try await Task.sleep(for: reconnectionDelay()) }
            attempts += 1
            let response: Response
            do {
                response = try await source.send(connectionRequest())
            } catch {
                try connectionEnded(by: error)
                return
            }
            if response.statusCode == 204 {
                response.body.cancel()
                finished = true
                return
            }
            guard response.statusCode == 200 else {
                response.body.cancel()
                finished = true
                throw source.failure(CourierError.status(of: Response(head: response.head)), of: request)
            }
            guard let type = response.contentType, type.type == "text", type.subtype == "event-stream" else {
                response.body.cancel()
                finished = true
                throw source.failure(notAnEventStream(response), of: request)
            }
            let body = response.body
            self.body = body
            chunks = body.makeAsyncIterator()
            connectionDelivered = false
            watchdog = configuration.idleTimeout.map { timeout in
                EventStreamWatchdog(timeout: timeout) { body.cancel() }
            }
        }

        /// The error for a response that is not an event stream.
        private func notAnEventStream(_ response: Response) -> CourierError {
            CourierError(
                kind: .undecodableBody,
                message: "the response is \(response.contentType?.description ?? "without a content type"), "
                    + "not an event stream (text/event-stream)",
                statusCode: response.statusCode,
                response: Response(head: response.head)
            )
        }

        /// The request of the next connection: the caller's, asking for an event stream, with the
        /// last event ID when there is one.
        private func connectionRequest() -> ResourceRequest {
            var request = self.request
            if request.headerFields[.accept] == nil { request.headerFields[.accept] = "text/event-stream" }
            if request.headerFields[.cacheControl] == nil { request.headerFields[.cacheControl] = "no-cache" }
            if !parser.lastEventID.isEmpty {
                request.headerFields[.lastEventID] = String(decoding: parser.lastEventID, as: UTF8.self)
            }
            return request
        }

        /// Reads the open connection's next chunk into events.
        private mutating func read() async throws {
            do {
                guard let chunk = try await chunks?.next() else {
                    try connectionEnded(by: nil)
                    return
                }
                let activity = try parser.parse(chunk, into: &events)
                if activity.sawBoundaryOrComment { watchdog?.touch() }
                if !events.isEmpty { connectionDelivered = true }
            } catch is CancellationError where !(watchdog?.hasFired ?? false) || Task.isCancelled {
                close()
                finished = true
                throw CancellationError()
            } catch is CancellationError {
                try connectionEnded(by: source.failure(idle(), of: request))
            } catch {
                try connectionEnded(by: error)
            }
        }

        /// The failure of a connection the watchdog closed.
        private func idle() -> CourierError {
            CourierError(
                kind: .stalled,
                message: "the event stream sent no event or comment for \(configuration.idleTimeout ?? .zero) "
                    + "(its idleTimeout)"
            )
        }

        /// Closes the open connection, if any; its parser's last event ID and retry carry over.
        private mutating func close() {
            watchdog?.stop()
            watchdog = nil
            body?.cancel()
            body = nil
            chunks = nil
            parser = ServerSentEventParser(
                maximumEventBytes: configuration.maximumEventBytes,
                lastEventID: parser.lastEventID,
                reconnectionTime: parser.reconnectionTime
            )
        }

        /// Decides what follows a connection that ended (`error` is `nil`) or failed: another
        /// connection, or the end of the stream.
        private mutating func connectionEnded(by error: (any Error)?) throws {
            close()
            guard configuration.reconnects, request.method.isIdempotent else {
                finished = true
                if let error { throw error }
                return
            }
            if let error, !Self.isTransient(error) {
                finished = true
                throw error
            }
            if connectionDelivered {
                failures = 0
                connectionDelivered = false
                return
            }
            failures += 1
            if failures >= Swift.max(1, configuration.maximumConsecutiveFailures) {
                finished = true
                throw error
                    ?? source.failure(
                        CourierError(
                            kind: .connectionClosed,
                            message: "the event stream ended \(failures) times in a row without an event"
                        ),
                        of: request
                    )
            }
        }

        /// Whether another connection may mend `error`: the network's failures, not a refusal
        /// of trust or of a token, nor an event too large.
        private static func isTransient(_ error: any Error) -> Bool {
            guard let error = error as? CourierError else { return false }
            switch error.kind {
            case .responseTooLarge, .responseHeaderTooLarge, .tooManyRedirects, .insecureRedirect: return false
            default: return error.kind.domain == .network
            }
        }

        /// How long to wait before the next connection: the server's `retry` (or the configured
        /// delay), doubled for each failure in a row up to the maximum, and up to half as long
        /// again at random, so that clients cut off together do not come back together.
        private func reconnectionDelay() -> Duration {
            let base = parser.reconnectionTime ?? configuration.reconnectionDelay
            var delay = base
            if failures > 0 {
                let floor = Swift.max(base, .milliseconds(100))
                delay = Swift.min(
                    Swift.max(floor, configuration.maximumReconnectionDelay),
                    floor * (1 << Swift.min(failures, 20))
                )
            }
            return delay + delay * Double.random(in: 0...0.5)
        }
    }
}

@available(*, unavailable)
extension ServerSentEvents.AsyncIterator: Sendable {}

extension HTTPField.Name {
    /// The last event ID a reconnecting event stream sends back.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
