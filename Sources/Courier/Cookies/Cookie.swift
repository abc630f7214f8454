public import Foundation

/// A cookie a server set, as a ``CookieJar`` keeps it (RFC 6265bis).
///
/// Cookies are made by the jar from the `Set-Cookie` fields of responses; a caller reads them
/// (``CookieJar/cookies``, ``CookieJar/cookies(for:)``) but does not make them.
///
/// Two cookies are equal when every public property is equal; when the jar made or last sent
/// them does not count.
public struct Cookie: Sendable, Hashable {
    /// The cookie's name; may be empty (a `Set-Cookie` of a value alone).
    public let name: String
    /// The cookie's value, as the server sent it.
    public let value: String
    /// The host (``isHostOnly``) or domain the cookie goes to: lower case, without a leading dot.
    public let domain: String
    /// The path the cookie goes to, and to the paths below it.
    public let path: String
    /// When the cookie expires, or `nil` for a session cookie, which lives as long as its jar.
    public let expires: Date?
    /// Whether the cookie goes only over HTTPS.
    public let isSecure: Bool
    /// Whether the server marked the cookie `HttpOnly` (hidden from scripts in a browser;
    /// Courier is an HTTP client, so it sends these like any other).
    public let isHTTPOnly: Bool
    /// The `SameSite` attribute the server gave, or `nil` when it gave none or an unknown one.
    /// Kept for a caller to read: an HTTP client has no site its requests come from, so the jar
    /// does not enforce it.
    public let sameSite: SameSite?
    /// Whether the cookie goes only to the host that set it, not to its subdomains: the
    /// `Set-Cookie` had no `Domain` attribute.
    public let isHostOnly: Bool
    /// When the jar first stored a cookie of this name, domain and path; a replacement keeps it.
    let creation: Date
    /// When the jar last stored or sent the cookie: the least recently used go first when a
    /// limit is reached.
    var lastAccess: Date

    /// The `SameSite` attribute of a cookie.
    public enum SameSite: String, Sendable, Hashable, CaseIterable {
        /// `SameSite=Strict`: a browser sends the cookie only with requests its own site started.
        case strict
        /// `SameSite=Lax`: a browser also sends it with top-level navigations from other sites.
        case lax
        /// `SameSite=None`: a browser sends it with requests from any site.
        case none
    }

    /// Creates a cookie the jar stores.
    init(
        name: String,
        value: String,
        domain: String,
        path: String,
        expires: Date?,
        isSecure: Bool,
        isHTTPOnly: Bool,
        sameSite: SameSite?,
        isHostOnly: Bool,
        creation: Date,
        lastAccess: Date
    ) {
        self.name = name
        self.value = value
        self.domain = domain
        self.path = path
        self.expires = expires
        self.isSecure = isSecure
        self.isHTTPOnly = isHTTPOnly
        self.sameSite = sameSite
        self.isHostOnly = isHostOnly
        self.creation = creation
        self.lastAccess = lastAccess
    }

    /// Whether the cookie has expired at `now`; a session cookie never does.
    func isExpired(at now: Date) -> Bool {
        guard let expires else { return false }
        return expires <= now
    }

    /// Whether `other` is the cookie this one replaces: the same name, domain, host-only flag
    /// and path.
    func hasIdentity(of other: Cookie) -> Bool {
        name == other.name && domain == other.domain && isHostOnly == other.isHostOnly && path == other.path
    }

    /// Whether the two cookies have equal public properties; their times do not count.
    public static func == (lhs: Cookie, rhs: Cookie) -> Bool {
        lhs.hasIdentity(of: rhs) && lhs.value == rhs.value && lhs.expires == rhs.expires
            && lhs.isSecure == rhs.isSecure && lhs.isHTTPOnly == rhs.isHTTPOnly && lhs.sameSite == rhs.sameSite
    }

    /// Hashes the public properties, as ``==(_:_:)`` compares them.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(value)
        hasher.combine(domain)
        hasher.combine(path)
        hasher.combine(expires)
        hasher.combine(isSecure)
        hasher.combine(isHTTPOnly)
        hasher.combine(sameSite)
        hasher.combine(isHostOnly)
    }
}
