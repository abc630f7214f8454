package import HTTPTypes

// The one way in for code of this package that speaks HTTPRequest rather than ResourceRequest
// (the OpenAPI transport): a request head as it is, a body streamed, and the response back as
// soon as its head arrives, with the same token, checks and tagging as the public requests.

extension UserClient {
    /// Sends a request with the user's token and returns once the response head arrives; the
    /// body streams.
    ///
    /// - Parameters:
    ///   - request: The request; an absolute URL, or a path relative to the resource base URL.
    ///   - body: The body, sent as it is produced.
    /// - Returns: The response with a streamed body, whatever its status.
    /// - Throws: As ``sendAuthenticatedRequest(_:logger:)``.
    package func streamAuthenticatedRequest(_ request: HTTPRequest, body: RequestBody?) async throws -> Response {
        let endpoint = ResponseEndpoint(method: request.method, target: request.path ?? "/")
        return try await shared.authenticated.send(
            request,
            body: body,
            endpoint: endpoint,
            streamed: true,
            credential: UserCredential(broker: broker, user: self),
            logger: nil
        )
    }
}

extension DeviceClient {
    /// Sends a request with the device's token and returns once the response head arrives;
    /// the body streams.
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
