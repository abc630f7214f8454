import HTTPTypes
public import Logging

extension Session {
    /// Sends a resource request and returns its response with the body in memory.
    ///
    /// The request is translated by ``ResourceRequest/makeHTTPRequest()`` first, so bad
    /// input throws before anything is sent. Any status is a response: call
    /// ``Response/validate(acceptableStatusCodes:)`` to turn an unaccepted status into an error.
    ///
    /// ```swift
    /// let response = try await session.send(ResourceRequest(path: "/api/users", parameters: ["page": 2]))
    /// ```
    ///
    /// - Parameters:
    ///   - resource: The request.
    ///   - logger: Where middleware logs for this request; nothing is logged by default.
    /// - Returns: The response.
    /// - Throws: ``CourierError`` for bad input, a refused request or a failed transfer;
    ///   `CancellationError` when cancelled.
    public nonisolated func send(_ resource: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await send(resource, attributes: RequestAttributes(), logger: logger)
    }

    /// Sends a resource request and returns as soon as the response head arrives; the body
    /// streams.
    ///
    /// Iterate ``Response/body`` for the chunks; while the consumer is behind, the transfer
    /// pauses. ``ResourceRequest/deadline`` bounds the head; the body is bounded by the stall
    /// timeout, so a long download is not cut off while it moves. Dropping the body before its
    /// end cancels the transfer.
    ///
    /// ```swift
    /// let response = try await session.stream(ResourceRequest(path: "/exports/latest"))
    /// for try await chunk in response.body { try file.write(contentsOf: chunk) }
    /// ```
    ///
    /// - Parameters:
    ///   - resource: The request.
    ///   - logger: Where middleware logs for this request; nothing is logged by default.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``send(_:logger:)``.
    public nonisolated func stream(_ resource: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await send(resource, delivery: .streamed, attributes: RequestAttributes(), logger: logger)
    }

    /// Sends a resource request, buffered or streamed, carrying the `attributes` a layer above
    /// the core attached to it.
    nonisolated func send(
        _ resource: ResourceRequest,
        delivery: ResponseDelivery = .buffered,
        attributes: RequestAttributes,
        logger: Logger?
    ) async throws -> Response {
        let translated = try translate(resource)
        return try await send(
            translated.request,
            body: translated.body,
            endpoint: resource.endpoint,
            deadline: resource.deadline,
            retryPolicy: resource.retryPolicy,
            delivery: delivery,
            attributes: attributes,
            logger: logger
        )
    }

    /// Starts an observable task for a resource request.
    ///
    /// - Parameters:
    ///   - resource: The request.
    ///   - logger: Where middleware logs for this request.
    /// - Returns: The running task; its ``NetworkTask/response`` is the HTTP response.
    /// - Throws: ``CourierError`` for bad input, before a task is made.
    public nonisolated func task(for resource: ResourceRequest, logger: Logger? = nil) throws -> NetworkTask {
        try task(for: resource, attributes: RequestAttributes(), logger: logger)
    }

    /// Starts an observable task for a resource request carrying `attributes`.
    nonisolated func task(
        for resource: ResourceRequest,
        attributes: RequestAttributes,
        logger: Logger?
    ) throws -> NetworkTask {
        let translated = try translate(resource)
        return task(
            for: translated.request,
            body: translated.body,
            deadline: resource.deadline,
            retryPolicy: resource.retryPolicy,
            attributes: attributes,
            logger: logger
        )
    }

    /// The HTTP request and body of `resource`; bad input is a ``CourierError`` that names the
    /// endpoint. Never inlined: what translating needs stays out of the async frame of the
    /// request, which every request in flight keeps.
    @inline(never)
    private nonisolated func translate(_ resource: ResourceRequest) throws -> (request: HTTPRequest, body: RequestBody?)
    {
        do {
            return try resource.makeHTTPRequest()
        } catch let error as CourierError {
            throw tagged(error.with(endpoint: resource.endpoint.description))
        }
    }
}
