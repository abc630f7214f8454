public import Foundation
public import HTTPTypes

/// A response: status, header fields, body and the transfer's metrics.
///
/// ``Session/send(_:body:logger:)`` returns a response whose body is already in memory
/// (``data``); ``Session/stream(_:body:logger:)`` returns as soon as the head arrives and the body
/// is consumed as an async sequence of chunks through ``body``.
public struct Response: Sendable {
    /// The status and header fields.
    public var head: HTTPResponse
    /// The body, buffered or streamed.
    public var body: ResponseBody
    /// Timings, byte counts, HTTP version and connection reuse, when the transport measured them.
    ///
    /// For a streamed body the metrics describe the transfer up to the response head.
    public var metrics: TransferMetrics?

    /// Creates a response.
    public init(head: HTTPResponse, body: ResponseBody = ResponseBody(), metrics: TransferMetrics? = nil) {
        self.head = head
        self.body = body
        self.metrics = metrics
    }

    /// The status code and reason.
    public var status: HTTPResponse.Status { head.status }

    /// The header fields; lookups are case-insensitive.
    public var headerFields: HTTPFields { head.headerFields }

    /// Whether the status is in 200–299.
    public var isSuccessful: Bool { (200...299).contains(head.status.code) }

    /// The buffered body bytes; empty for a streamed body (iterate ``body`` instead).
    public var data: Data { body.bufferedData ?? Data() }
}
