import Foundation
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
        /// How many attempts in a row failed or ended without a sign of life.
        private var failures = 0
        /// Whether the open connection showed life: an event, a blank line or a comment.
        private var connectionWasAlive = false
        /// Whether the stream is over: nothing but the events already parsed is left.
        private var finished = false
        /// The failure that ended the stream while events parsed before it were still to be
        /// returned; thrown after them.
        private var failureAfterEvents: (any Error)?

        init(request: ResourceRequest, configuration: Configuration, source: Source) {
            self.request = request
            self.configuration = configuration
            self.source = source
            // A caller's own Last-Event-ID resumes the stream as if an earlier connection had
            // ended there.
            let resumeAfter = request.headerFields[.lastEventID].map { Array($0.utf8) } ?? []
            parser = ServerSentEventParser(maximumEventBytes: configuration.maximumEventBytes, lastEventID: resumeAfter)
        }

        /// The next event, or `nil` when the stream is over.
        ///
        /// - Throws: A ``CourierError`` that ended the stream for good, or `CancellationError`
        ///   when the task was cancelled.
        public mutating func next() async throws -> ServerSentEvent? {
            if Task.isCancelled {
                close()
                finished = true
                events.removeAll()
                delivered = 0
                throw CancellationError()
            }
            // The consumer is back: the time it held the last event was not the connection's.
            watchdog?.touch()
            while true {
                if delivered < events.count {
                    delivered += 1
                    watchdog?.pause()
                    return events[delivered - 1]
                }
                events.removeAll(keepingCapacity: true)
                delivered = 0
                if let failure = failureAfterEvents {
                    failureAfterEvents = nil
                    throw failure
                }
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
            connectionWasAlive = false
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
        /// last event ID when there is one. The caller's deadline bounds the first connection's
        /// head; a reconnection's head is bounded by the session's timeout, from when it is sent.
        private func connectionRequest() -> ResourceRequest {
            var request = self.request
            if request.headerFields[.accept] == nil { request.headerFields[.accept] = "text/event-stream" }
            if request.headerFields[.cacheControl] == nil { request.headerFields[.cacheControl] = "no-cache" }
            request.headerFields[.lastEventID] =
                parser.lastEventID.isEmpty ? nil : String(decoding: parser.lastEventID, as: UTF8.self)
            if attempts > 1 { request.deadline = nil }
            return request
        }

        /// Reads the open connection's next chunk into events.
        private mutating func read() async throws {
            let chunk: Data
            do {
                guard let next = try await chunks?.next() else {
                    try connectionEnded(by: nil)
                    return
                }
                chunk = next
            } catch is CancellationError where !(watchdog?.hasFired ?? false) || Task.isCancelled {
                close()
                finished = true
                throw CancellationError()
            } catch is CancellationError {
                try connectionEnded(by: source.failure(idle(), of: request))
                return
            } catch {
                try connectionEnded(by: error)
                return
            }
            do {
                if try parser.parse(chunk, into: &events).sawBoundaryOrComment {
                    watchdog?.touch()
                    connectionWasAlive = true
                }
            } catch let error as CourierError {
                // An event too large: the events before it in the chunk still reach the consumer.
                close()
                finished = true
                failureAfterEvents = source.failure(error, of: request)
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
            if connectionWasAlive {
                failures = 0
                connectionWasAlive = false
                return
            }
            failures += 1
            if failures >= Swift.max(1, configuration.maximumConsecutiveFailures) {
                finished = true
                throw error
                    ?? source.failure(
                        CourierError(
                            kind: .connectionClosed,
                            message: "the event stream ended \(failures) times in a row without an event or comment"
                        ),
                        of: request
                    )
            }
        }

        /// Whether another connection may mend `error`: the network's failures, not a refusal
        /// of trust (a certificate or pin that failed the handshake) or of a token, nor an event
        /// too large.
        private static func isTransient(_ error: any Error) -> Bool {
            guard let error = error as? CourierError else { return false }
            switch error.kind {
            case .responseTooLarge, .responseHeaderTooLarge, .tooManyRedirects, .insecureRedirect, .tlsFailure,
                .requestBodyFailed:
                return false
            default: return error.kind.domain == .network
            }
        }

        /// How long to wait before the next connection: the server's `retry` (or the configured
        /// delay), doubled for each failure in a row, both at most the maximum delay; then up to
        /// half as long again at random, so that clients cut off together do not come back
        /// together.
        private func reconnectionDelay() -> Duration {
            let maximum = configuration.maximumReconnectionDelay.inSeconds
            var delay = Swift.min((parser.reconnectionTime ?? configuration.reconnectionDelay).inSeconds, maximum)
            if failures > 0 {
                let floor = Swift.max(delay, 0.1)
                delay = Swift.min(Swift.max(floor, maximum), floor * Double(1 << Swift.min(failures, 20)))
            }
            return .seconds(delay * Double.random(in: 1...1.5))
        }
    }
}

@available(*, unavailable)
extension ServerSentEvents.AsyncIterator: Sendable {}

extension HTTPField.Name {
    /// The last event ID a reconnecting event stream sends back.
    static let lastEventID = HTTPField.Name("Last-Event-ID")!
}
