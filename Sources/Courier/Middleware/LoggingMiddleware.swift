import Foundation
public import HTTPTypes
public import Logging

/// Logs one line per request and one per response: method, URL, status, duration and bytes
/// (for a streamed body, the time to the response head and "body streamed").
///
/// Secrets never reach the log: the values of `Authorization`, `Proxy-Authorization`,
/// `Cookie` and `Set-Cookie` are replaced by `<redacted>`, and so are the values of query
/// parameters whose names suggest a secret (`access_token`, `password`, …).
/// Header fields are logged at `debug` level only.
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
        var logger = logger
        logger[metadataKey: "courier.task"] = "\(context.taskID)"
        logger[metadataKey: "courier.attempt"] = "\(context.attempt)"
        let target = Redaction.url(of: request)
        let method = request.method.rawValue
        logger.log(level: level, "→ \(method) \(target)")
        if logger.logLevel <= .debug {
            logger.debug("→ headers \(Redaction.fields(request.headerFields))")
        }
        let start = ContinuousClock.now
        do {
            let response = try await next(request, body, context)
            let elapsed = ContinuousClock.now - start
            // A streamed body has not arrived yet: say so rather than count bytes that are to come.
            let size =
                response.body.isStreamed
                ? "body streamed"
                : "\(response.metrics?.bytesReceived ?? Int64(response.data.count)) bytes"
            logger.log(
                level: level,
                "← \(method) \(target) \(response.status.code) in \(Redaction.milliseconds(elapsed)) ms, \(size)"
            )
            if logger.logLevel <= .debug {
                logger.debug("← headers \(Redaction.fields(response.headerFields))")
            }
            return response
        } catch {
            let elapsed = ContinuousClock.now - start
            logger.log(level: level, "✕ \(method) \(target) failed in \(Redaction.milliseconds(elapsed)) ms: \(error)")
            throw error
        }
    }
}
