package import HTTPTypes
public import Logging

// Streamed requests of every kind: the response returns as soon as its head arrives and its
// body streams with back-pressure — a service that proxies a user's download, or reads a long
// response, holds a chunk at a time, never the whole body. Each carries the same token, passes
// the same trust checks, retries its head the same way (a 401 renews the token and resends,
// before any of the body reaches the caller) and tags its errors the same way as its buffered
// twin.

extension UserClient {
    /// Sends a request with the user's token and returns once the response head arrives; the
    /// body streams.
    ///
    /// ```swift
    /// let response = try await access.userClient(for: userID).streamAuthenticatedRequest(
    ///     ResourceRequest(path: "/api/user/download")
    /// )
    /// for try await chunk in response.body { try file.write(contentsOf: chunk) }
    /// ```
    ///
    /// Iterate ``Response/body`` for the chunks: while the consumer is behind, the transfer
    /// pauses, so memory stays flat however large the body. Dropping the body before its end
    /// cancels the transfer. ``ResourceRequest/deadline`` bounds the head; the body is bounded
    /// by ``ResourceAccess/Configuration/stallTimeout``.
    ///
    /// - Parameters:
    ///   - request: The request; its path is relative to the resource base URL.
    ///   - logger: Where this request logs.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``sendAuthenticatedRequest(_:logger:)``.
    public func streamAuthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await shared.authenticated.send(
            request,
            delivery: .streamed,
            attributes: credential(broker),
            logger: logger
        )
    }

    /// Sends a request with the implicit token and returns once the response head arrives;
    /// the body streams as for ``streamAuthenticatedRequest(_:logger:)``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``sendImplicitRequest(_:logger:)``.
    public func streamImplicitRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await shared.implicit.send(
            request,
            delivery: .streamed,
            attributes: credential(implicitBroker),
            logger: logger
        )
    }

    /// Sends a request with a token exchanged from the user's and returns once the response
    /// head arrives; the body streams as for ``streamAuthenticatedRequest(_:logger:)``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - exchange: The scope, audience and resource to exchange for.
    ///   - logger: Where this request logs.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``sendExchangedRequest(_:exchange:logger:)``.
    public func streamExchangedRequest(
        _ request: ResourceRequest,
        exchange: TokenExchangeRequest,
        logger: Logger? = nil
    ) async throws -> Response {
        try await shared.authenticated.send(
            request,
            delivery: .streamed,
            attributes: credential(exchangeBroker(exchange)),
            logger: logger
        )
    }

    /// Sends a request with the user's token and returns once the response head arrives; the
    /// body streams. For code of this package that speaks `HTTPRequest` (the OpenAPI
    /// transport): a request head as it is and a body streamed.
    ///
    /// - Parameters:
    ///   - request: The request; an absolute URL, or a path relative to the resource base URL.
    ///   - body: The body, sent as it is produced.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``sendAuthenticatedRequest(_:logger:)``.
    package func streamAuthenticatedRequest(_ request: HTTPRequest, body: RequestBody?) async throws -> Response {
        let endpoint = ResponseEndpoint(of: request)
        return try await shared.authenticated.send(
            request,
            body: body,
            endpoint: endpoint,
            delivery: .streamed,
            attributes: credential(broker),
            logger: nil
        )
    }
}

extension DeviceClient {
    /// Sends an anonymous request and returns once the response head arrives; the body
    /// streams as for ``UserClient/streamAuthenticatedRequest(_:logger:)``.
    ///
    /// - Parameters:
    ///   - request: The request; its path is relative to the resource base URL.
    ///   - logger: Where this request logs.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``sendAnonymousRequest(_:logger:)``.
    public func streamAnonymousRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws -> Response {
        try await anonymous.stream(request, logger: logger)
    }

    /// Sends a request without a token and returns once the response head arrives; the body
    /// streams as for ``UserClient/streamAuthenticatedRequest(_:logger:)``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - logger: Where this request logs.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``sendUnauthenticatedRequest(_:logger:)``.
    public func streamUnauthenticatedRequest(_ request: ResourceRequest, logger: Logger? = nil) async throws -> Response
    {
        try await unauthenticated.stream(request, logger: logger)
    }

    /// Sends a request with the device's token and returns once the response head arrives;
    /// the body streams. For code of this package that speaks `HTTPRequest` (the OpenAPI
    /// transport).
    ///
    /// - Parameters:
    ///   - request: The request; an absolute URL, or a path relative to the resource base URL.
    ///   - body: The body, sent as it is produced.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``sendAnonymousRequest(_:logger:)``.
    package func streamAnonymousRequest(_ request: HTTPRequest, body: RequestBody?) async throws -> Response {
        try await anonymous.stream(request, body: body)
    }
}
