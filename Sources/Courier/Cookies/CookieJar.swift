public import Foundation
import HTTPTypes

/// The cookies servers set, kept and sent back as RFC 6265bis says.
///
/// A jar stores the `Set-Cookie` fields of every response — each redirect hop's too — and adds
/// a `Cookie` field to each request, hop by hop, with the cookies whose domain, path and
/// `Secure` flag fit it. Give a session one through ``Session/Configuration/cookieJar``:
///
/// ```swift
/// var configuration = Session.Configuration(baseURL: URL(string: "https://api.example.com")!)
/// configuration.cookieJar = CookieJar()
/// ```
///
/// What the jar refuses, as the RFC asks: a `Domain` that does not cover the host that set it,
/// or that is a public suffix (`com`, `co.uk`, `github.io`: see the list note below); a
/// `Secure` cookie from plain HTTP, and one from plain HTTP that would shadow a secure one;
/// `__Secure-` and `__Host-` names without `Secure` (and, for `__Host-`, with a `Domain` or a
/// path other than `/`); a name and value longer than
/// ``Limits/maximumNameAndValueBytes``; any control character. A `Secure` cookie goes only
/// over HTTPS — plain HTTP to a loopback address included. An IP address matches only itself.
/// `SameSite` is kept but not enforced: an HTTP client has no site its requests come from.
///
/// Public suffixes come from libpsl, which libcurl links, opened at run time; without it a
/// `Domain` with no inner dot (`com`) is refused, and longer suffixes are not recognised.
///
/// The jar is safe to share between tasks; each operation holds its lock briefly. It lives in
/// memory only.
public final class CookieJar: Sendable {
    /// How much the jar keeps.
    public let limits: Limits
    /// The cookies, under a lock.
    private let store: LockedBox<CookieStore>

    /// Creates an empty jar.
    ///
    /// - Parameter limits: How many cookies it keeps, and how large they may be.
    public init(limits: Limits = Limits()) {
        self.limits = limits
        self.store = LockedBox(CookieStore(limits: limits))
    }

    /// Every cookie in the jar that has not expired, grouped by domain.
    public var cookies: [Cookie] {
        let now = Date()
        return store.withLock { $0.all(now: now) }
    }

    /// The cookies a request to `url` would carry, in the order it would carry them.
    ///
    /// Reading them does not count as a use for the jar's least-recently-used eviction.
    ///
    /// - Parameter url: An absolute `http` or `https` URL; any other has no cookies.
    /// - Returns: The cookies, longer paths first, then older ones.
    public func cookies(for url: URL) -> [Cookie] {
        guard let origin = CookieOrigin(url) else { return [] }
        let now = Date()
        return store.withLock { $0.cookies(for: origin, now: now, touch: false) }
    }

    /// Removes every cookie.
    public func removeAll() {
        store.withLock { $0.removeAll() }
    }

    /// The value of the `Cookie` field `request` carries — `a=1; b=2` — or `nil` when no
    /// cookie fits it; the cookies sent count as used at `now`.
    ///
    /// - Parameter request: An absolute request: scheme, authority and path set.
    func headerValue(for request: HTTPRequest, now: Date = Date()) -> String? {
        // An empty jar answers before the request's host is parsed.
        guard store.withLock({ $0.count > 0 }), let origin = CookieOrigin(request) else { return nil }
        let cookies = store.withLock { $0.cookies(for: origin, now: now, touch: true) }
        guard !cookies.isEmpty else { return nil }
        var value = ""
        for cookie in cookies {
            if !value.isEmpty { value += "; " }
            if !cookie.name.isEmpty {
                value += cookie.name
                value += "="
            }
            value += cookie.value
        }
        return value
    }

    /// Stores the cookies of the `Set-Cookie` fields of `response`, the answer to `request`.
    ///
    /// - Parameters:
    ///   - response: The response head; a redirect's too.
    ///   - request: The absolute request that the response answers.
    ///   - now: When the response arrived.
    func store(from response: HTTPResponse, for request: HTTPRequest, now: Date = Date()) {
        guard response.headerFields.contains(.setCookie), let origin = CookieOrigin(request) else { return }
        var cookies: [Cookie] = []
        for field in response.headerFields where field.name == .setCookie {
            guard let parsed = SetCookie(field.value, now: now, limits: limits),
                let cookie = CookieStore.cookie(from: parsed, origin: origin, now: now)
            else { continue }
            cookies.append(cookie)
        }
        guard !cookies.isEmpty else { return }
        store.withLock { store in
            for cookie in cookies { store.store(cookie, fromSecureOrigin: origin.isSecure, now: now) }
        }
    }
}
