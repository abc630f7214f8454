import Foundation

extension AuthorizationServer {
    /// Discovered metadata documents, in memory, per issuer.
    ///
    /// A document is kept for the `max-age` of the response's `Cache-Control` (at most a day),
    /// or for ``defaultMaxAge`` when the response gives none; a `no-store` or `no-cache`
    /// response is not kept. Only documents that passed the issuer check are kept, and the
    /// endpoints of a kept document are checked against the caller's trust set again on every
    /// discovery, so a document fetched for one transport never lets another send credentials
    /// to a host it does not trust.
    ///
    /// ``shared`` serves every discovery that names no cache. Give a cache of your own to
    /// control its lifetime, or call ``removeAll()`` after rotating an authorization server's
    /// endpoints.
    public final class DiscoveryCache: Sendable {
        /// The cache discoveries use unless given another.
        public static let shared = DiscoveryCache()

        /// How long a document is kept when its response has no `Cache-Control: max-age`.
        public let defaultMaxAge: Duration

        /// The longest a document is kept, whatever its response says.
        static let maximumAge: Duration = .seconds(24 * 3600)

        private struct Entry: Sendable {
            let metadata: AuthorizationServerMetadata
            let expires: ContinuousClock.Instant
        }

        private let entries = LockedBox<[String: Entry]>([:])

        /// Creates an empty cache.
        ///
        /// - Parameter defaultMaxAge: How long to keep a document whose response has no
        ///   `Cache-Control: max-age`; one hour by default.
        public init(defaultMaxAge: Duration = .seconds(3600)) {
            self.defaultMaxAge = defaultMaxAge
        }

        /// Forgets every document.
        public func removeAll() {
            entries.withLock { $0.removeAll() }
        }

        /// The document kept for `issuer`, if it has not expired.
        func metadata(for issuer: String) -> AuthorizationServerMetadata? {
            let now = ContinuousClock.now
            return entries.withLock { entries in
                guard let entry = entries[issuer] else { return nil }
                guard entry.expires > now else {
                    entries[issuer] = nil
                    return nil
                }
                return entry.metadata
            }
        }

        /// Keeps a document as its response's `Cache-Control` allows.
        func store(_ metadata: AuthorizationServerMetadata, for issuer: String, cacheControl: String?) {
            guard let age = Self.maxAge(cacheControl: cacheControl, default: defaultMaxAge), age > .zero else {
                entries.withLock { $0[issuer] = nil }
                return
            }
            let entry = Entry(metadata: metadata, expires: ContinuousClock.now.advanced(by: min(age, Self.maximumAge)))
            entries.withLock { $0[issuer] = entry }
        }

        /// How long a response may be kept: `nil` for `no-store` or `no-cache`, its
        /// `max-age`, or `default`.
        static func maxAge(cacheControl: String?, default: Duration) -> Duration? {
            guard let cacheControl else { return `default` }
            var age = `default`
            for directive in cacheControl.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1)
                let name = parts[0].trimmingCharacters(in: .whitespaces).lowercased()
                switch name {
                case "no-store", "no-cache":
                    return nil
                case "max-age" where parts.count == 2:
                    let value = parts[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: ["\""])
                    if let seconds = Int(value), seconds >= 0 { age = .seconds(seconds) }
                default:
                    continue
                }
            }
            return age
        }
    }
}
