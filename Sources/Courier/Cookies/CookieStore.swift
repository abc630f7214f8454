import Foundation

/// The cookies of one ``CookieJar``, and the rules of RFC 6265bis for storing (§5.7) and
/// retrieving (§5.8.3) them; the jar holds it under its lock.
///
/// Cookies are grouped by domain, so a request looks only at the groups of its host and the
/// domains above it.
struct CookieStore: Sendable {
    /// How much the store keeps.
    let limits: CookieJar.Limits
    /// The cookies, by ``Cookie/domain``.
    private(set) var byDomain: [String: [Cookie]] = [:]
    /// How many cookies the store holds.
    private(set) var count = 0
    /// How many of them are ``Cookie/isSecure``: while none is, a cookie from plain HTTP needs
    /// no search for a secure one it may not shadow.
    private var secureCount = 0
    /// The earliest expiry of a stored cookie, when one has one: no cookie has expired before.
    private var nextExpiry: Date?

    /// An empty store.
    init(limits: CookieJar.Limits) {
        self.limits = limits
    }

    /// The cookie `setCookie` makes for a response from `origin`, or `nil` when the rules
    /// ignore it: a `Domain` that does not cover the host or is a public suffix other than the
    /// host, `Secure` from plain HTTP, or a `__Secure-` or `__Host-` name without what its
    /// prefix demands. Needs no store, so the jar calls it before taking its lock.
    static func cookie(from setCookie: SetCookie, origin: CookieOrigin, now: Date) -> Cookie? {
        var domain = origin.host
        var isHostOnly = true
        if let attribute = setCookie.domain, !attribute.isEmpty {
            if !CookieMatching.isIPAddress(attribute), PublicSuffixes.contains(attribute) {
                guard attribute == origin.host else { return nil }  // a public suffix: only as host-only
            } else {
                guard CookieMatching.domainMatches(origin.host, attribute) else { return nil }
                domain = attribute
                isHostOnly = false
            }
        }
        let path = setCookie.path ?? CookieMatching.defaultPath(origin.path)
        if setCookie.isSecure, !origin.isSecure { return nil }
        guard
            Self.satisfiesPrefix(
                of: setCookie.name.isEmpty ? setCookie.value : setCookie.name,
                nameIsEmpty: setCookie.name.isEmpty,
                isSecure: setCookie.isSecure,
                isHostOnly: isHostOnly,
                path: setCookie.path
            )
        else { return nil }
        return Cookie(
            name: setCookie.name,
            value: setCookie.value,
            domain: domain,
            path: path,
            expires: setCookie.expires,
            isSecure: setCookie.isSecure,
            isHTTPOnly: setCookie.isHTTPOnly,
            sameSite: setCookie.sameSite,
            isHostOnly: isHostOnly,
            creation: now,
            lastAccess: now
        )
    }

    /// Whether a cookie named `name` keeps the rules of its prefix: `__Secure-` needs `Secure`;
    /// `__Host-` needs `Secure`, no `Domain` and a `Path` attribute of `/`. A nameless cookie whose value
    /// starts with a prefix is refused, so it cannot pass for a prefixed one. Prefixes match in
    /// any case.
    static func satisfiesPrefix(
        of name: String,
        nameIsEmpty: Bool,
        isSecure: Bool,
        isHostOnly: Bool,
        path: String?
    )
        -> Bool
    {
        let isSecurePrefixed = hasPrefix(name, "__secure-")
        let isHostPrefixed = hasPrefix(name, "__host-")
        guard isSecurePrefixed || isHostPrefixed else { return true }
        if nameIsEmpty { return false }
        if isSecurePrefixed { return isSecure }
        return isSecure && isHostOnly && path == "/"
    }

    /// Whether `text` starts with the lower-case ASCII `prefix`, in any case.
    private static func hasPrefix(_ text: String, _ prefix: StaticString) -> Bool {
        let bytes = text.utf8
        guard bytes.count >= prefix.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: prefix.utf8Start, count: prefix.utf8CodeUnitCount)
        return zip(bytes, expected).allSatisfy { actual, expected in
            (actual >= 0x41 && actual <= 0x5A ? actual | 0x20 : actual) == expected
        }
    }

    /// Stores `cookie`, made by ``cookie(from:origin:now:)`` for a response from an origin
    /// that `fromSecureOrigin` says was HTTPS or not.
    ///
    /// A cookie from plain HTTP that is not secure may not shadow a secure one of the same name
    /// on an overlapping domain and path. A cookie replaces the one with its name, domain,
    /// host-only flag and path, keeping its creation time; an expired one only deletes it.
    /// Then the limits are enforced.
    mutating func store(_ cookie: Cookie, fromSecureOrigin: Bool, now: Date) {
        if !cookie.isSecure, !fromSecureOrigin, secureCount > 0, shadowsSecureCookie(cookie) { return }
        var cookie = cookie
        var group = byDomain[cookie.domain] ?? []
        if let old = group.firstIndex(where: { $0.hasIdentity(of: cookie) }) {
            cookie = cookie.keepingCreation(of: group[old])
            remove(at: old, in: &group)
        }
        guard !cookie.isExpired(at: now) else {
            byDomain[cookie.domain] = group.isEmpty ? nil : group
            return
        }
        group.append(cookie)
        count += 1
        if cookie.isSecure { secureCount += 1 }
        if let expires = cookie.expires, nextExpiry.map({ expires < $0 }) ?? true { nextExpiry = expires }
        byDomain[cookie.domain] = group
        enforceLimits(afterStoringIn: cookie.domain, now: now)
    }

    /// Whether a secure cookie of `cookie`'s name exists on a domain that domain-matches
    /// `cookie`'s or that it domain-matches, on a path `cookie`'s path path-matches.
    private func shadowsSecureCookie(_ cookie: Cookie) -> Bool {
        for (domain, group) in byDomain
        where CookieMatching.domainMatches(domain, cookie.domain) || CookieMatching.domainMatches(cookie.domain, domain)
        {
            for stored in group
            where stored.isSecure && stored.name == cookie.name
                && CookieMatching.pathMatches(Substring(cookie.path), stored.path)
            {
                return true
            }
        }
        return false
    }

    /// Removes the cookie at `index` of `group`, counting it out.
    private mutating func remove(at index: Int, in group: inout [Cookie]) {
        if group[index].isSecure { secureCount -= 1 }
        group.remove(at: index)
        count -= 1
    }

    /// Evicts past the limits: expired cookies first, then the least recently used of the
    /// domain just stored into, then the least recently used of all.
    private mutating func enforceLimits(afterStoringIn domain: String, now: Date) {
        let domainCount = byDomain[domain]?.count ?? 0
        guard domainCount > limits.cookiesPerDomain || count > limits.totalCookies else { return }
        removeExpired(now: now, force: true)
        if var group = byDomain[domain], group.count > limits.cookiesPerDomain {
            while group.count > max(limits.cookiesPerDomain, 0), let oldest = Self.leastRecentlyUsed(in: group) {
                remove(at: oldest, in: &group)
            }
            byDomain[domain] = group.isEmpty ? nil : group
        }
        while count > max(limits.totalCookies, 0) {
            var victim: (domain: String, index: Int, cookie: Cookie)?
            for (domain, group) in byDomain {
                guard let index = Self.leastRecentlyUsed(in: group) else { continue }
                if victim.map({ Self.isUsedLessRecently(group[index], than: $0.cookie) }) ?? true {
                    victim = (domain, index, group[index])
                }
            }
            guard let victim, var group = byDomain[victim.domain] else { break }
            remove(at: victim.index, in: &group)
            byDomain[victim.domain] = group.isEmpty ? nil : group
        }
    }

    /// The index of the least recently used cookie of `group`.
    private static func leastRecentlyUsed(in group: [Cookie]) -> Int? {
        group.indices.min { isUsedLessRecently(group[$0], than: group[$1]) }
    }

    /// Whether `cookie` was used less recently than `other`: older last access, then older
    /// creation.
    private static func isUsedLessRecently(_ cookie: Cookie, than other: Cookie) -> Bool {
        (cookie.lastAccess, cookie.creation) < (other.lastAccess, other.creation)
    }

    /// Removes every cookie expired at `now`; unless `force`, only when one may have.
    mutating func removeExpired(now: Date, force: Bool = false) {
        guard let nextExpiry, force || nextExpiry <= now else { return }
        var earliest: Date?
        for (domain, group) in byDomain {
            var kept = group
            var index = kept.startIndex
            while index < kept.endIndex {
                if kept[index].isExpired(at: now) {
                    remove(at: index, in: &kept)
                } else {
                    if let expires = kept[index].expires, earliest.map({ expires < $0 }) ?? true { earliest = expires }
                    index += 1
                }
            }
            if kept.count != group.count { byDomain[domain] = kept.isEmpty ? nil : kept }
        }
        self.nextExpiry = earliest
    }

    /// The cookies a request to `origin` carries (§5.8.3), longer paths first, then older
    /// ones; with `touch`, their last access becomes `now`. Expired cookies are removed first.
    mutating func cookies(for origin: CookieOrigin, now: Date, touch: Bool) -> [Cookie] {
        removeExpired(now: now)
        guard count > 0 else { return [] }
        var found: [Cookie] = []
        for domain in origin.candidateDomains {
            let key = String(domain)
            guard var group = byDomain[key] else { continue }
            let isHost = key.utf8.count == origin.host.utf8.count
            var touched = false
            for index in group.indices {
                let cookie = group[index]
                guard isHost || !cookie.isHostOnly, !cookie.isSecure || origin.isSecure,
                    CookieMatching.pathMatches(origin.path, cookie.path)
                else { continue }
                if touch {
                    group[index].lastAccess = now
                    touched = true
                }
                found.append(cookie)
            }
            if touched { byDomain[key] = group }
        }
        if found.count > 1 {
            found.sort { first, second in
                let (firstLength, secondLength) = (first.path.utf8.count, second.path.utf8.count)
                return firstLength != secondLength ? firstLength > secondLength : first.creation < second.creation
            }
        }
        return found
    }

    /// Every unexpired cookie, by domain, then as a request would carry them.
    mutating func all(now: Date) -> [Cookie] {
        removeExpired(now: now)
        return byDomain.keys.sorted().flatMap { domain in
            byDomain[domain, default: []].sorted { first, second in
                let (firstLength, secondLength) = (first.path.utf8.count, second.path.utf8.count)
                return firstLength != secondLength ? firstLength > secondLength : first.creation < second.creation
            }
        }
    }

    /// Removes every cookie.
    mutating func removeAll() {
        byDomain = [:]
        count = 0
        secureCount = 0
        nextExpiry = nil
    }
}

extension Cookie {
    /// This cookie with the creation time of `old`, the cookie it replaces.
    func keepingCreation(of old: Cookie) -> Cookie {
        Cookie(
            name: name,
            value: value,
            domain: domain,
            path: path,
            expires: expires,
            isSecure: isSecure,
            isHTTPOnly: isHTTPOnly,
            sameSite: sameSite,
            isHostOnly: isHostOnly,
            creation: old.creation,
            lastAccess: lastAccess
        )
    }
}
