/// What a request addressed, without its query: `GET /api/users/42`.
///
/// Errors, logs and the analytics hash of ``ResourceError`` use the endpoint, so a query
/// string (which may hold secrets) never reaches them. The path is the one the request was
/// made with: relative to the base URL, or the path of an absolute URL, always starting
/// with `/`; the host and the base URL's path prefix are not part of it, so the same call
/// has the same endpoint in every environment.
public struct ResourceEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// The method.
    public let method: ResourceRequest.Method
    /// The path, without query or fragment, starting with `/`.
    public let path: String

    /// Creates an endpoint.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: The path; a query or fragment is dropped and a leading `/` added.
    public init(method: ResourceRequest.Method, path: String) {
        self.method = method
        var path = Substring(path)
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        self.path = path.hasPrefix("/") ? String(path) : "/" + path
    }

    /// The endpoint of a request target: a relative path, or an absolute URL whose scheme
    /// and authority are dropped.
    init(method: ResourceRequest.Method, target: String) {
        if let absolute = try? RequestTarget.absoluteParts(of: target) {
            self.init(method: method, path: absolute.pathAndQuery)
        } else {
            self.init(method: method, path: target)
        }
    }

    /// `METHOD /path`.
    public var description: String { "\(method.rawValue) \(path)" }
}
