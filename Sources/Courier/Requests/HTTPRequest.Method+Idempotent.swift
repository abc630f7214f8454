import HTTPTypes

extension HTTPRequest.Method {
    /// Whether sending the request twice has the effect of sending it once (RFC 9110 §9.2.2):
    /// GET, HEAD, OPTIONS, TRACE, PUT and DELETE.
    var isIdempotent: Bool {
        switch self {
        case .get, .head, .options, .trace, .put, .delete: true
        default: false
        }
    }
}
