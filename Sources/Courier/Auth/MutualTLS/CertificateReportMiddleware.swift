import HTTPTypes

/// Asks the transport to tell which client certificate a token request's connection
/// presented (``CertificateBinding/report``), so that a token the server binds to it can be
/// sent only over connections presenting the same one.
///
/// The innermost middleware of the token endpoint's session.
struct CertificateReportMiddleware: Middleware {
    /// Sends the request with the report asked for.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        var context = context
        context.options.certificateBinding = .report
        return try await next(request, body, context)
    }
}
