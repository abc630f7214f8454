import HTTPTypes

/// The values of the OpenTelemetry HTTP client conventions that Courier's metrics and spans
/// carry, read from a prepared request and its outcome.
///
/// Only values of bounded cardinality become metric dimensions: the method (unknown ones as
/// `_OTHER`), the server's host and port, the status, the error type and the protocol version
/// — never the path or the query.
struct HTTPClientSemantics: Sendable {
    /// `http.request.method`: a known method's name, `_OTHER` for any other.
    let method: String
    /// `server.address`: the host, without brackets for IPv6.
    let serverAddress: String
    /// `server.port`: the port, or the scheme's default.
    let serverPort: Int

    init(_ request: HTTPRequest) {
        method = Self.methodName(request.method)
        let scheme = request.scheme ?? "https"
        let (host, port) = Self.hostAndPort(request.authority ?? "")
        serverAddress = host
        serverPort = port ?? (scheme == "http" ? 80 : 443)
    }

    /// The method as the conventions name it.
    static func methodName(_ method: HTTPRequest.Method) -> String {
        switch method.rawValue {
        case "GET", "POST", "PUT", "DELETE", "HEAD", "PATCH", "OPTIONS", "CONNECT", "TRACE", "QUERY": method.rawValue
        default: "_OTHER"
        }
    }

    /// The host and port of an authority, without user information.
    static func hostAndPort(_ authority: String) -> (host: String, port: Int?) {
        // Scanned as bytes: every delimiter is ASCII, and no grapheme breaking is needed.
        var rest = Substring(authority).utf8
        if let at = rest.lastIndex(of: UInt8(ascii: "@")) { rest = rest[rest.index(after: at)...] }
        if rest.first == UInt8(ascii: "[") {
            guard let close = rest.firstIndex(of: UInt8(ascii: "]")) else { return (String(Substring(rest)), nil) }
            let host = rest[rest.index(after: rest.startIndex)..<close]
            let after = rest[rest.index(after: close)...]
            return (String(Substring(host)), after.first == UInt8(ascii: ":") ? Int(Substring(after.dropFirst())) : nil)
        }
        guard let colon = rest.lastIndex(of: UInt8(ascii: ":")) else { return (String(Substring(rest)), nil) }
        return (String(Substring(rest[..<colon])), Int(Substring(rest[rest.index(after: colon)...])))
    }

    /// `url.full` without user information, query or fragment, which may carry secrets.
    static func fullURL(_ request: HTTPRequest) -> String {
        let (host, port) = hostAndPort(request.authority ?? "")
        let bracketed = host.utf8.contains(UInt8(ascii: ":")) ? "[\(host)]" : host
        let authority = port.map { "\(bracketed):\($0)" } ?? bracketed
        let path = request.path ?? "/"
        let end = path.utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? path.endIndex
        return "\(request.scheme ?? "https")://\(authority)\(path[..<end])"
    }

    /// `network.protocol.version` of a response.
    static func protocolVersion(_ metrics: Response.Metrics?) -> String? {
        switch metrics?.httpVersion {
        case .http1_0: "1.0"
        case .http1_1: "1.1"
        case .http2: "2"
        case .http3: "3"
        case .unknown, nil: nil
        }
    }

    /// `error.type` of a response: its status code when it is an error (4xx, 5xx).
    static func errorType(status: Int) -> String? {
        status >= 400 ? String(status) : nil
    }

    /// `error.type` of a failure: the ``CourierError/Kind`` name, `cancelled`, or the type.
    static func errorType(_ error: any Error) -> String {
        switch error {
        case let error as CourierError: error.kind.name
        case is CancellationError: "cancelled"
        default: String(describing: type(of: error))
        }
    }
}
