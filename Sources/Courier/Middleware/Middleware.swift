public import HTTPTypes

/// A step of a ``Session``'s request pipeline that sees each request on its way to the
/// transport and each response on its way back.
///
/// Middleware is onion-shaped. The first middleware in ``Session/Configuration/middlewares``
/// sees the request first and the response last. One shape serves three kinds of filter:
///
/// - a **request filter** changes the request, then calls `next`;
/// - a **response filter** calls `next`, then inspects or replaces the response;
/// - a **challenge filter** calls `next`, and when the response asks for it (a 401, say),
///   obtains what was missing and calls `next` again: the request restarts from this layer.
///
/// ### Implement a middleware
///
/// ```swift
/// struct RequestIDMiddleware: Middleware {
///     func intercept(
///         _ request: HTTPRequest, body: RequestBody?, context: MiddlewareContext, next: Next
///     ) async throws -> Response {
///         var request = request
///         request.headerFields[HTTPField.Name("X-Request-ID")!] = "\(context.taskID)"
///         return try await next(request, body, context)
///     }
/// }
/// ```
///
/// A middleware that restarts a request should increase ``MiddlewareContext/attempt`` and
/// may only resend a body whose ``RequestBody/isReplayable`` is `true`.
public protocol Middleware: Sendable {
    /// The rest of the pipeline: the following middleware, and at the end the transport.
    typealias Next = @Sendable (HTTPRequest, RequestBody?, MiddlewareContext) async throws -> Response

    /// Handles one request.
    ///
    /// - Parameters:
    ///   - request: The request. Relative requests have already been resolved against the
    ///     session's base URL, so scheme and authority are set.
    ///   - body: The request body, if any.
    ///   - context: The task id, the attempt, the logger and the transfer options.
    ///   - next: Sends the request on through the rest of the pipeline. Call it zero, one or
    ///     more times.
    /// - Returns: The response for the caller.
    /// - Throws: Whatever the middleware or the rest of the pipeline throws.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response
}
