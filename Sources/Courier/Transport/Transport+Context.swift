import HTTPTypes

extension Transport {
    /// Sends `request` with the options and control of `context`.
    ///
    /// The session's own ``CurlTransport`` keeps the context itself for the transfer, which a
    /// request waiting for a connection holds all that time, rather than a copy of its options;
    /// any other transport gets them as ``execute(_:body:options:control:)`` asks. Where the
    /// transport's type is known to be ``CurlTransport``, the check costs nothing.
    @inline(__always)
    func execute(_ request: HTTPRequest, body: RequestBody?, context: MiddlewareContext) async throws -> Response {
        if let curl = self as? CurlTransport {
            return try await curl.transfer(request, body: body, context: context)
        }
        return try await execute(request, body: body, options: context.options, control: context.control)
    }
}
