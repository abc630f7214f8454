public import Foundation
public import HTTPTypes

/// A response: status, header fields, body and the transfer's metrics.
///
/// Every way of sending returns this one type: ``Session/send(_:body:deadline:logger:)`` with the body
/// already in memory (``data``), ``Session/stream(_:body:deadline:logger:)`` as soon as the head
/// arrives, with the body consumed as an async sequence of chunks through ``body``, and the
/// clients of secured resource access.
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
public struct Response: Sendable {
    /// The status and header fields.
    public var head: HTTPResponse
    /// The body, buffered or streamed.
    public var body: Response.Body
    /// Timings, byte counts, HTTP version and connection reuse, when the transport measured them.
    ///
    /// For a streamed body the metrics describe the transfer up to the response head.
    public var metrics: Response.Metrics? {
        get { details?.metrics }
        set { setDetails(metrics: newValue, clientCertificateThumbprint: clientCertificateThumbprint) }
    }
    /// The `x5t#S256` of the client certificate the response's connection presented, when the
    /// transfer asked for it (``CertificateBinding/report``) and the connection presented one.
    var clientCertificateThumbprint: String? {
        get { details?.clientCertificateThumbprint }
        set { setDetails(metrics: metrics, clientCertificateThumbprint: newValue) }
    }
    /// What most responses do not carry, in a shared box: a response is small wherever an async
    /// frame holds it, and every request in flight has a few such frames.
    private var details: Details?

    private final class Details: Sendable {
        let metrics: Response.Metrics?
        let clientCertificateThumbprint: String?

        init(metrics: Response.Metrics?, clientCertificateThumbprint: String?) {
            self.metrics = metrics
            self.clientCertificateThumbprint = clientCertificateThumbprint
        }
    }

    private mutating func setDetails(metrics: Response.Metrics?, clientCertificateThumbprint: String?) {
        details =
            metrics == nil && clientCertificateThumbprint == nil
            ? nil : Details(metrics: metrics, clientCertificateThumbprint: clientCertificateThumbprint)
    }
    /// What the request addressed (method and path without query), set by the session.
    var endpoint: ResponseEndpoint?
    /// How many times the request was sent to get this response: 1 unless it was retried
    /// (see ``RetryPolicy``).
    public internal(set) var attempts: Int = 1
    /// Whether the response came from the network or from the session's ``HTTPCache``
    /// (``Session/Configuration/cache``); ``CacheStatus/network`` without a cache.
    public var cacheStatus: CacheStatus = .network

    /// Creates a response, as a transport, a middleware or a test double would.
    ///
    /// - Parameters:
    ///   - head: The status and header fields.
    ///   - body: The body; empty by default.
    ///   - metrics: The transfer's metrics.
    public init(head: HTTPResponse, body: Response.Body = Response.Body(), metrics: Response.Metrics? = nil) {
        self.head = head
        self.body = body
        self.details = metrics.map { Details(metrics: $0, clientCertificateThumbprint: nil) }
    }

    /// The status code and reason phrase.
    public var status: HTTPResponse.Status { head.status }

    /// The status code.
    public var statusCode: Int { head.status.code }

    /// The header fields; lookups by `HTTPField.Name` or ``subscript(header:)`` ignore case.
    public var headerFields: HTTPFields { head.headerFields }

    /// The trailer fields: sent after the body, kept apart from ``headerFields``. Empty when the
    /// server sent none; for a streamed body, there once the transfer has ended — always once
    /// you have read the body to its end.
    ///
    /// Logging redacts them as it does header fields.
    public var trailerFields: HTTPFields { body.trailerFields }
    /// Whether the status is in 200–299.
    public var isSuccessful: Bool { (200...299).contains(head.status.code) }

    /// The buffered body bytes; empty for a streamed body (iterate ``body`` instead).
    public var data: Data { body.bufferedData ?? Data() }

    /// The values of a header field joined with `, `, or `nil` when it is absent or the name
    /// is not a valid field name; the name's case does not matter.
    ///
    /// - Parameter name: The field name, such as `"content-type"`.
    public subscript(header name: String) -> String? {
        guard let name = HTTPField.Name(name) else { return nil }
        return head.headerFields[name]
    }

    /// The media type and its parameters from `Content-Type`.
    public var contentType: MediaType? {
        head.headerFields[.contentType].flatMap(MediaType.init(parsing:))
    }
}
