import Foundation
import HTTPTypes

/// Where a request goes, as the cookie rules see it: canonical host, whether the channel is
/// secure, and the path without its query.
struct CookieOrigin: Sendable, Hashable {
    /// The host: lower case, no trailing dot, an IPv6 address without brackets.
    let host: String
    /// Whether ``host`` is an IP address, which matches no other host.
    let isIPAddress: Bool
    /// Whether the request goes over HTTPS. Plain HTTP is not secure, to a loopback address too.
    let isSecure: Bool
    /// The request path without query or fragment, `/` when empty.
    let path: Substring

    /// An origin from its parts.
    init(host: String, isIPAddress: Bool, isSecure: Bool, path: Substring) {
        self.host = host
        self.isIPAddress = isIPAddress
        self.isSecure = isSecure
        self.path = path
    }

    /// The origin of an absolute request, or `nil` when it is not an `http` or `https` request
    /// with a valid authority.
    init?(_ request: HTTPRequest) {
        guard let scheme = request.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let authority = request.authority, let parsed = try? Authority(authority)
        else { return nil }
        self.init(
            host: parsed.host,
            isIPAddress: parsed.kind != .name,
            isSecure: scheme == "https",
            path: CookieMatching.pathWithoutQuery(request.path)
        )
    }

    /// The origin of an absolute `http` or `https` URL, or `nil` for any other.
    init?(_ url: URL) {
        guard let scheme = url.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let authority = Authority(url: url)
        else { return nil }
        let path = url.path(percentEncoded: true)
        self.init(
            host: authority.host,
            isIPAddress: authority.kind != .name,
            isSecure: scheme == "https",
            path: path.isEmpty ? "/" : Substring(path)
        )
    }

    /// The domains a cookie sent to this host may be stored under: the host, then each domain
    /// above it (`a.example.com`, `example.com`, `com`); only the host for an IP address.
    var candidateDomains: [Substring] {
        var domains: [Substring] = [Substring(host)]
        guard !isIPAddress else { return domains }
        var rest = Substring(host)
        while let dot = rest.utf8.firstIndex(of: UInt8(ascii: ".")) {
            rest = rest[rest.index(after: dot)...]
            if !rest.isEmpty { domains.append(rest) }
        }
        return domains
    }
}
