import Foundation
public import HTTPTypes
public import Logging

/// Logs one line per request and one per response: method, URL, status, duration and bytes
/// (for a streamed body, the time to the response head and "body streamed").
///
/// Secrets never reach the log: the values of `Authorization`, `Proxy-Authorization`,
/// `Cookie` and `Set-Cookie` are replaced by `<redacted>`, and so are the values of query
/// parameters whose names suggest a secret (`access_token`, `password`, …).
/// Header fields, and the trailer fields of a buffered body, are logged at `debug` level only,
/// redacted alike.
///
/// ```swift
/// let session = Session(configuration: .init(middlewares: [LoggingMiddleware(logger: logger)]))
/// ```
public struct LoggingMiddleware: Middleware {
    private let logger: Logger
    private let level: Logger.Level

    /// Creates a logging middleware.
    ///
    /// - Parameters:
    ///   - logger: Where the lines go. The middleware never creates a logger of its own.
    ///   - level: The level of the request and response lines (`info` by default).
    public init(logger: Logger, level: Logger.Level = .info) {
        self.logger = logger
        self.level = level
    }

    /// Logs the request, sends it on, and logs the response or the error.
    public func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        // The lines are made by functions of their own, and what the second needs from the
        // first is one small value: the async frame every request in flight keeps holds that,
        // not what making the lines takes.
        let entry = logRequest(request, context: context)
        do {
            let response = try await next(request, body, context)
            logResponse(response, of: entry)
            return response
        } catch {
            logFailure(error, of: entry)
            throw error
        }
    }

    /// What the line of a response needs from the line of its request, in a fixed layout (its
    /// start as a distance from `ContinuousClock.reference`).
    private struct Entry: Sendable {
        let logger: Logger
        let method: String
        let target: String
        let start = ContinuousClock.sinceReference
    }

    /// Logs the request line (and its fields at `debug`).
    @inline(never)
    private func logRequest(_ request: HTTPRequest, context: MiddlewareContext) -> Entry {
        var logger = logger
        logger[metadataKey: "courier.task"] = "\(context.taskID)"
        logger[metadataKey: "courier.attempt"] = "\(context.attempt)"
        let method = request.method.rawValue
        let target = Redaction.url(of: request)
        logger.log(level: level, "→ \(method) \(target)")
        if logger.logLevel <= .debug {
            logger.debug("→ headers \(Redaction.fields(request.headerFields))")
        }
        return Entry(logger: logger, method: method, target: target)  // the duration starts after the lines
    }

    /// Logs the response line (and its fields at `debug`).
    @inline(never)
    private func logResponse(_ response: Response, of entry: Entry) {
        let elapsed = ContinuousClock.sinceReference - entry.start
        // A streamed body has not arrived yet: say so rather than count bytes that are to come.
        let size =
            response.body.isStreamed
            ? "body streamed"
            : "\(response.metrics?.bytesReceived ?? Int64(response.data.count)) bytes"
        entry.logger.log(
            level: level,
            "← \(entry.method) \(entry.target) \(response.status.code) in \(Redaction.milliseconds(elapsed)) ms, \(size)"
        )
        if entry.logger.logLevel <= .debug {
            entry.logger.debug("← headers \(Redaction.fields(response.headerFields))")
            // A buffered body's trailers are there already; a stream's come after this line.
            if !response.body.isStreamed, !response.trailerFields.isEmpty {
                entry.logger.debug("← trailers \(Redaction.fields(response.trailerFields))")
            }
        }
    }

    /// Logs the line of a request that failed.
    @inline(never)
    private func logFailure(_ error: any Error, of entry: Entry) {
        let elapsed = ContinuousClock.sinceReference - entry.start
        entry.logger.log(
            level: level,
            "✕ \(entry.method) \(entry.target) failed in \(Redaction.milliseconds(elapsed)) ms: \(error)"
        )
    }
}
