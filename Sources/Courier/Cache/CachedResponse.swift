import Foundation
import HTTPTypes

/// A stored response: its head and buffered body, when it was requested and received, and the
/// request fields it was selected by.
struct CachedResponse: Sendable {
    /// Unique within its cache; a changed copy (after a validation) gets a new one.
    let id: UInt64
    /// The status and the stored header fields.
    let head: HTTPResponse
    /// The body.
    let body: Data
    /// The trailer fields that ended the body, if any.
    let trailerFields: HTTPFields
    /// When the request that produced it was sent (`request_time`, RFC 9111 §4.2.3).
    let requestTime: Date
    /// When it was received (`response_time`).
    let responseTime: Date
    /// The request fields named by its `Vary` field, as the request that produced it had them.
    let variance: Variance
    /// Its directives, as the partition it is stored in reads them: in the shared partition
    /// `s-maxage` replaces `max-age` and forbids serving stale, as for a shared cache
    /// (RFC 9111 §5.2.2.10).
    let control: CacheControl

    /// Creates a stored response; `isShared` when it goes to the shared partition.
    init(
        id: UInt64,
        head: HTTPResponse,
        body: Data,
        trailerFields: HTTPFields = HTTPFields(),
        requestTime: Date,
        responseTime: Date,
        request: HTTPRequest,
        isShared: Bool = false
    ) {
        self.id = id
        self.head = head
        self.body = body
        self.trailerFields = trailerFields
        self.requestTime = requestTime
        self.responseTime = responseTime
        self.variance = Variance(response: head.headerFields, request: request.headerFields)
        var control = CacheControl(head.headerFields)
        if isShared, let sharedMaxAge = control.sharedMaxAge {
            control.maxAge = sharedMaxAge
            control.mustRevalidate = true
        }
        self.control = control
    }

    /// The memory it holds, roughly: the body, the fields' names and values, and a fixed part.
    var byteCount: Int {
        var count = 256 + body.count
        for field in head.headerFields { count += field.name.rawName.utf8.count + field.value.utf8.count + 4 }
        for field in trailerFields { count += field.name.rawName.utf8.count + field.value.utf8.count + 4 }
        return count
    }

    /// Its entity tag, if it has one.
    var entityTag: String? { head.headerFields[.eTag] }

    /// Its `Last-Modified` value, if it has one.
    var lastModified: String? { head.headerFields[.lastModified] }

    /// Whether it can be validated with a conditional request.
    var hasValidator: Bool { entityTag != nil || lastModified != nil }

    /// The response a caller gets from it, with the given cache status.
    func response(status: Response.CacheStatus) -> Response {
        let body = trailerFields.isEmpty ? Response.Body(body) : Response.Body(body, trailerFields: trailerFields)
        var response = Response(head: head, body: body)
        response.cacheStatus = status
        return response
    }
}
