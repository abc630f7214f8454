extension Authority {
    /// The normal form of a host as trust policies compare it: lower case, without a trailing
    /// dot, an IPv6 address without brackets and in its canonical spelling. Text that is not
    /// a valid host is only lowercased and trimmed, so it matches nothing valid by accident.
    static func normalizedHost(_ host: some StringProtocol) -> String {
        var text = Substring(host)
        if text.contains(":"), !text.hasPrefix("[") { text = "[\(text)]"[...] }
        if let authority = try? Authority(text), authority.port == nil, !authority.hasUserInfo {
            return authority.host
        }
        var fallback = Substring(host.lowercased())
        if fallback.hasPrefix("["), fallback.hasSuffix("]") { fallback = fallback.dropFirst().dropLast() }
        while fallback.hasSuffix(".") { fallback = fallback.dropLast() }
        return String(fallback)
    }

    /// The scheme and authority of an absolute URL `scheme://authority/...`, or `nil`.
    static func of(url: some StringProtocol) -> (scheme: String, authority: Authority)? {
        let text = Substring(url)
        guard let colon = text.firstIndex(of: ":"), text[colon...].hasPrefix("://") else { return nil }
        let afterScheme = text[text.index(colon, offsetBy: 3)...]
        let end = afterScheme.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterScheme.endIndex
        guard let authority = try? Authority(afterScheme[..<end]) else { return nil }
        return (text[..<colon].lowercased(), authority)
    }
}
