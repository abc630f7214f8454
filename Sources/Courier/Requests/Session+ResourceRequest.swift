public import Logging

extension Session {
    /// Sends a resource request and returns its response with the body in memory.
    ///
    /// The request is translated by ``ResourceRequest/makeHTTPRequest()`` first, so bad
    /// input throws before anything is sent. Any status is a response: call
    /// ``ResourceResponse/validate(acceptableStatusCodes:)`` to turn an unaccepted status into
    /// a ``ResourceError``.
    ///
    /// ```swift
    /// let response = try await session.send(ResourceRequest(path: "/api/users", parameters: ["page": 2]))
    /// ```
    ///
    /// - Parameters:
    ///   - resource: The request.
    ///   - logger: Where middleware logs for this request; nothing is logged by default.
    /// - Returns: The response.
    /// - Throws: ``RequestError`` for bad input, ``SessionError`` when the session refuses
    ///   the request, ``TransportError`` when the transfer fails, `CancellationError` when
    ///   cancelled.
    public nonisolated func send(_ resource: ResourceRequest, logger: Logger? = nil) async throws -> ResourceResponse {
        let (request, body) = try resource.makeHTTPRequest()
        let response = try await send(request, body: body, logger: logger)
        return ResourceResponse(response, endpoint: resource.endpoint)
    }

    /// Starts an observable task for a resource request.
    ///
    /// - Parameters:
    ///   - resource: The request.
    ///   - logger: Where middleware logs for this request.
    /// - Returns: The running task; its ``NetworkTask/response`` is the HTTP response.
    /// - Throws: ``RequestError`` for bad input, before a task is made.
    public nonisolated func task(for resource: ResourceRequest, logger: Logger? = nil) throws -> NetworkTask {
        let (request, body) = try resource.makeHTTPRequest()
        return task(for: request, body: body, logger: logger)
    }
}
