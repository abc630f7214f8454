public import Foundation
public import HTTPTypes

/// The response to a ``ResourceRequest``: status, headers, body bytes and metrics.
///
/// Courier never maps a payload on its own: any status is a response, the body is handed
/// over as bytes, and the caller decides what to decode and whether a status is an error.
///
/// ```swift
/// let response = try await session.send(ResourceRequest(path: "/api/users/42"))
/// guard response.isSuccessful else { ... }
/// let user = try response.decode(User.self)
/// // or: let user = try response.validate().decode(User.self)
/// ```
public struct ResourceResponse: Sendable {
    /// The request's method and path, without query.
    public let endpoint: ResourceEndpoint
    /// The status code and reason phrase.
    public let status: HTTPResponse.Status
    /// The header fields; lookups by `HTTPField.Name` or ``subscript(header:)`` ignore case.
    public let headers: HTTPFields
    /// The body bytes.
    public let data: Data
    /// Timings, byte counts, HTTP version and connection reuse, when the transport measured them.
    public let metrics: TransferMetrics?

    /// Creates a response, as a mock or a middleware would.
    ///
    /// - Parameters:
    ///   - endpoint: The request's endpoint.
    ///   - status: The status.
    ///   - headers: The header fields.
    ///   - data: The body.
    ///   - metrics: The transfer's metrics.
    public init(
        endpoint: ResourceEndpoint,
        status: HTTPResponse.Status,
        headers: HTTPFields = [:],
        data: Data = Data(),
        metrics: TransferMetrics? = nil
    ) {
        self.endpoint = endpoint
        self.status = status
        self.headers = headers
        self.data = data
        self.metrics = metrics
    }

    /// Creates a resource response from a session's buffered response.
    ///
    /// - Parameters:
    ///   - response: The response; its buffered body becomes ``data``.
    ///   - endpoint: The request's endpoint.
    public init(_ response: Response, endpoint: ResourceEndpoint) {
        self.init(
            endpoint: endpoint,
            status: response.status,
            headers: response.headerFields,
            data: response.data,
            metrics: response.metrics
        )
    }

    /// The status code.
    public var statusCode: Int { status.code }

    /// Whether the status is in 200–299.
    public var isSuccessful: Bool { (200...299).contains(status.code) }

    /// The values of a header field joined with `, `, or `nil` when it is absent or the name
    /// is not a valid field name; the name's case does not matter.
    ///
    /// - Parameter name: The field name, such as `"content-type"`.
    public subscript(header name: String) -> String? {
        guard let name = HTTPField.Name(name) else { return nil }
        return headers[name]
    }

    /// The media type and its parameters from `Content-Type`.
    public var contentType: MediaType? {
        headers[.contentType].flatMap(MediaType.init(parsing:))
    }
}
