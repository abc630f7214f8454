#if CommandLine
import Courier
import HTTPTypes

/// Puts the `-H` fields a resource request may not carry itself (`Authorization`,
/// `User-Agent`) on every request of a command, as the request commands send them: on the
/// command line the operator is the application, and passes its credential as curl users do.
struct OperatorHeaderMiddleware: Middleware {
    /// The fields, set on each request (replacing one of the same name).
    let fields: HTTPFields

    /// Whether a `-H` field with `name` goes through this middleware rather than the request.
    static func carries(_ name: HTTPField.Name) -> Bool {
        name == .authorization || name == .userAgent
    }

    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        var request = request
        for name in Set(fields.map(\.name)) { request.headerFields[values: name] = fields[values: name] }
        return try await next(request, body, context)
    }
}
#endif
