import HTTPTypes

/// What a request addressed, without its query: `GET /api/users/42`.
///
/// Errors, logs and the analytics hash use the endpoint, so a query string (which may hold
/// secrets) never reaches them. The path is the one the request was made with: relative to
/// the base URL, or the path of an absolute URL, always starting with `/`; the host and the
/// base URL's path prefix are not part of it, so the same call has the same endpoint in
/// every environment.
///
/// One reference in size: every ``Response`` has an endpoint's place, and a request in flight
/// holds the places of several responses in the async frames of its chain (the result of each
/// async call that returns one), which its task keeps in slabs of about 1 KB. The endpoint of a
/// request without an authority shares the request's own pseudo-header fields, so naming it
/// allocates nothing; any other is kept in a box of its own.
struct ResponseEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// Where the method and the path are kept.
    private enum Source: Sendable {
        /// The pseudo-header fields of a request without an authority.
        case request(HTTPRequest.PseudoHeaderFields)
        /// A method and a path of their own.
        case parts(Parts)
    }

    /// A method and a path, boxed so that the endpoint stays one reference.
    private final class Parts: Sendable {
        let method: HTTPRequest.Method
        let target: String

        init(method: HTTPRequest.Method, target: String) {
            self.method = method
            self.target = target
        }
    }

    private let source: Source

    /// The endpoint of a method and a path as a request gave them.
    init(method: HTTPRequest.Method, target: String) {
        source = .parts(Parts(method: method, target: target))
    }

    /// The endpoint `request` addresses: its method and its path (`/` when it has none).
    init(of request: HTTPRequest) {
        if request.pseudoHeaderFields.authority == nil {
            // The authority is the only part the endpoint leaves out; without one, the fields
            // hold nothing the endpoint would not.
            source = .request(request.pseudoHeaderFields)
        } else {
            source = .parts(Parts(method: request.method, target: request.path ?? "/"))
        }
    }

    /// The method.
    var method: HTTPRequest.Method {
        switch source {
        case .request(let fields):
            guard let method = HTTPRequest.Method(fields.method.value) else {
                preconditionFailure("a request's method field holds no method")
            }
            return method
        case .parts(let parts):
            return parts.method
        }
    }

    /// The path as the request gave it; the query is dropped when the endpoint is described.
    var target: String {
        switch source {
        case .request(let fields): fields.path?.value ?? "/"
        case .parts(let parts): parts.target
        }
    }

    static func == (lhs: ResponseEndpoint, rhs: ResponseEndpoint) -> Bool {
        lhs.method == rhs.method && lhs.target == rhs.target
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(method)
        hasher.combine(target)
    }

    /// `METHOD /path`, without query or fragment; a control character of a path that could
    /// not be sent is percent-encoded (`%0D%0A`), so that no endpoint holds one. The authority
    /// of an absolute URL is left out even when it is malformed: it may hold a password.
    var description: String {
        var path = Substring(target)
        if let absolute = try? RequestTarget.absoluteParts(of: target) {
            path = Substring(absolute.pathAndQuery)
        } else if let colon = target.firstIndex(of: ":"), !target[..<colon].contains("/"),
            target[colon...].hasPrefix("://")
        {
            let rest = target[colon...].dropFirst(3)
            path = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" }.map { rest[$0...] } ?? ""
        }
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        let safe = ErrorText.percentEncodingUnsafe(path)
        return "\(method.rawValue) \(safe.hasPrefix("/") ? safe : "/" + safe)"
    }
}
