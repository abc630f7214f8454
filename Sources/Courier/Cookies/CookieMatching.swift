/// The matching rules of RFC 6265bis: which host a domain covers (§5.1.3) and which path a
/// cookie path covers (§5.1.4).
enum CookieMatching {
    /// Whether `host` (canonical: lower case, an IPv6 address without brackets) is an IP
    /// address rather than a name.
    static func isIPAddress(_ host: String) -> Bool {
        if host.utf8.contains(UInt8(ascii: ":")) { return true }
        return !host.isEmpty && host.utf8.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || $0 == UInt8(ascii: ".") }
    }

    /// Whether `host` domain-matches `domain`: they are equal, or `host` is a name that ends in
    /// `.` + `domain`. An IP address matches only itself.
    static func domainMatches(_ host: String, _ domain: String) -> Bool {
        if host == domain { return true }
        let hostBytes = host.utf8
        let domainBytes = domain.utf8
        guard hostBytes.count > domainBytes.count, !isIPAddress(host) else { return false }
        guard hostBytes.reversed().starts(with: domainBytes.reversed()) else { return false }
        let dot = hostBytes.index(hostBytes.endIndex, offsetBy: -domainBytes.count - 1)
        return hostBytes[dot] == UInt8(ascii: ".")
    }

    /// The default path of a request path (§5.1.4): the path up to, not including, its last
    /// `/`; `/` when that leaves nothing or the path does not start with `/`. `path` is
    /// without its query.
    static func defaultPath(_ path: Substring) -> String {
        guard path.hasPrefix("/"), let last = path.utf8.lastIndex(of: UInt8(ascii: "/")), last != path.startIndex
        else { return "/" }
        return String(path[..<last])
    }

    /// Whether `requestPath` path-matches `cookiePath`: equal, or `cookiePath` is a prefix that
    /// ends in `/` or is followed by `/` in `requestPath`.
    static func pathMatches(_ requestPath: Substring, _ cookiePath: String) -> Bool {
        guard requestPath.utf8.starts(with: cookiePath.utf8) else { return false }
        let request = requestPath.utf8
        let cookie = cookiePath.utf8
        if request.count == cookie.count || cookie.last == UInt8(ascii: "/") { return true }
        return request[request.index(request.startIndex, offsetBy: cookie.count)] == UInt8(ascii: "/")
    }

    /// The path of a request target without its query (and fragment); `/` when empty.
    static func pathWithoutQuery(_ target: String?) -> Substring {
        guard let target, !target.isEmpty else { return "/" }
        let end = target.utf8.firstIndex { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? target.endIndex
        let path = target[..<end]
        return path.isEmpty ? "/" : path
    }
}
