extension CookieJar {
    /// How much a ``CookieJar`` keeps, and how large a cookie may be.
    ///
    /// The defaults are those RFC 6265bis asks a client to support at least, and what browsers
    /// keep: 50 cookies per domain, 3000 in all, 4096 bytes of name and value, 1024 bytes of an
    /// attribute value, and no cookie living longer than 400 days.
    public struct Limits: Sendable, Hashable {
        /// The most cookies kept for one domain; past it the least recently used of the domain
        /// go first.
        public var cookiesPerDomain: Int
        /// The most cookies kept in all; past it the least recently used go first.
        public var totalCookies: Int
        /// The longest name and value, together, in UTF-8 bytes: a longer cookie is ignored.
        public var maximumNameAndValueBytes: Int
        /// The longest attribute value in UTF-8 bytes: a longer attribute is ignored.
        public var maximumAttributeValueBytes: Int
        /// The longest a cookie lives, however far its `Expires` or `Max-Age` reaches.
        public var maximumAge: Duration

        /// Creates limits; every default is the one described on ``CookieJar/Limits``.
        ///
        /// - Parameters:
        ///   - cookiesPerDomain: The most cookies per domain (50).
        ///   - totalCookies: The most cookies in all (3000).
        ///   - maximumNameAndValueBytes: The longest name and value together (4096).
        ///   - maximumAttributeValueBytes: The longest attribute value (1024).
        ///   - maximumAge: The longest a cookie lives (400 days).
        public init(
            cookiesPerDomain: Int = 50,
            totalCookies: Int = 3000,
            maximumNameAndValueBytes: Int = 4096,
            maximumAttributeValueBytes: Int = 1024,
            maximumAge: Duration = .seconds(400 * 86_400)
        ) {
            self.cookiesPerDomain = cookiesPerDomain
            self.totalCookies = totalCookies
            self.maximumNameAndValueBytes = maximumNameAndValueBytes
            self.maximumAttributeValueBytes = maximumAttributeValueBytes
            self.maximumAge = maximumAge
        }
    }
}
