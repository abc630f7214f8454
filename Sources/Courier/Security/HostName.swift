/// Host names as trust policies compare them, and the hosts of authorities and URLs.
///
/// A host is compared in its normal form: lower case, without a trailing dot, an IPv6
/// address without its brackets.
enum HostName {
    /// The normal form of a host name.
    static func normalized(_ host: some StringProtocol) -> String {
        var host = Substring(host.lowercased())
        if host.hasPrefix("["), host.hasSuffix("]") { host = host.dropFirst().dropLast() }
        while host.hasSuffix(".") { host = host.dropLast() }
        return String(host)
    }

    /// The normal host of an authority `[userinfo@]host[:port]`, or `nil` when it has none.
    static func host(ofAuthority authority: some StringProtocol) -> String? {
        var rest = Substring(authority)
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("[") {
            guard let close = rest.firstIndex(of: "]") else { return nil }
            rest = rest[...close]
        } else if let colon = rest.firstIndex(of: ":") {
            rest = rest[..<colon]
        }
        let host = normalized(rest)
        return host.isEmpty ? nil : host
    }

    /// The normal host of an absolute URL `scheme://authority/...`, or `nil`.
    static func host(ofURL url: some StringProtocol) -> String? {
        let text = Substring(url)
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let afterScheme = text[text.index(colon, offsetBy: 3)...]
        let end = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        return host(ofAuthority: afterScheme[..<end])
    }
}
