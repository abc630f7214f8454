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
