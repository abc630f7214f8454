extension Response {
    /// Where a response came from when the session has an ``HTTPCache``
    /// (``Session/Configuration/cache``).
    public enum CacheStatus: Sendable, Hashable {
        /// From the network, with no stored response that could be used: the session has no
        /// cache, nothing was stored, or the server sent a new response.
        case network
        /// Served fresh from the cache; nothing was sent.
        case hit
        /// A stored response the server confirmed with a 304 (Not Modified): its body, with
        /// the header fields the 304 updated.
        case revalidated
        /// Served stale: at once while it is validated in the background
        /// (`stale-while-revalidate`), because the request accepts it (`max-stale`), or because
        /// validation failed (`stale-if-error`).
        case stale
    }
}
