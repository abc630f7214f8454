import HTTPTypes

/// What a request addressed, without its query: `GET /api/users/42`.
///
/// Errors, logs and the analytics hash use the endpoint, so a query string (which may hold
/// secrets) never reaches them. The path is the one the request was made with: relative to
/// the base URL, or the path of an absolute URL, always starting with `/`; the host and the
/// base URL's path prefix are not part of it, so the same call has the same endpoint in
/// every environment.
struct ResponseEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The method.
    let method: HTTPRequest.Method
    /// The path as the request gave it; the query is dropped when the endpoint is described.
    let target: String

    /// `METHOD /path`, without query or fragment.
    var description: String {
        var path = Substring(target)
        if let absolute = try? RequestTarget.absoluteParts(of: target) { path = Substring(absolute.pathAndQuery) }
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        return "\(method.rawValue) \(path.hasPrefix("/") ? String(path) : "/" + path)"
    }
}
