public import HTTPTypes

extension ResourceRequest {
    /// The methods a resource request can use.
    ///
    /// A closed set, unlike `HTTPRequest.Method`: resource gateways accept these six, and
    /// each has a fixed rule for where parameters go (see ``ResourceRequest/parameters``).
    public enum Method: String, Sendable, Hashable, CaseIterable {
        /// `GET`: parameters go in the query; no body.
        case get = "GET"
        /// `POST`: parameters go in the body.
        case post = "POST"
        /// `PUT`: parameters go in the body.
        case put = "PUT"
        /// `PATCH`: parameters go in the body.
        case patch = "PATCH"
        /// `HEAD`: parameters go in the query; no body.
        case head = "HEAD"
        /// `DELETE`: parameters go in the query; a raw body is allowed.
        case delete = "DELETE"

        /// Whether parameters are sent in the body rather than the query.
        public var sendsParametersInBody: Bool {
            switch self {
            case .post, .put, .patch: true
            case .get, .head, .delete: false
            }
        }

        /// Whether a request with this method may carry a body at all.
        public var allowsBody: Bool { self != .get && self != .head }

        /// The swift-http-types method.
        public var httpMethod: HTTPRequest.Method {
            switch self {
            case .get: .get
            case .post: .post
            case .put: .put
            case .patch: .patch
            case .head: .head
            case .delete: .delete
            }
        }
    }
}
