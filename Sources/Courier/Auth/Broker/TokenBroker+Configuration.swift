extension TokenBroker {
    /// Renewal timing and limits.
    struct Configuration: Sendable, Hashable {
        /// How long before expiry a token is renewed (30 seconds by default). It is capped at
        /// half the token's lifetime, so short-lived tokens are not renewed on every use.
        var leeway: Duration
        /// The refresh-loop guard.
        var refreshLimit: RefreshLimit
        /// How long to wait after failed renewals.
        var backoff: RenewalBackoff
        /// With a ``SharedTokenStore``: how long a renewal's lease holds (10 seconds by
        /// default, longer than a token request takes). A holder that dies blocks the others
        /// at most this long.
        var leaseDuration: Duration

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - leeway: How long before expiry to renew.
        ///   - refreshLimit: The refresh-loop guard.
        ///   - backoff: How long to wait after failed renewals.
        ///   - leaseDuration: How long a renewal's lease on a shared store holds.
        init(
            leeway: Duration = .seconds(30),
            refreshLimit: RefreshLimit = RefreshLimit(),
            backoff: RenewalBackoff = RenewalBackoff(),
            leaseDuration: Duration = .seconds(10)
        ) {
            self.leeway = leeway
            self.refreshLimit = refreshLimit
            self.backoff = backoff
            self.leaseDuration = leaseDuration
        }
    }

    /// Counts for tests, the demo and metrics.
    struct Statistics: Sendable, Hashable {
        /// Renewals started (each one strategy call).
        var renewals: Int = 0
        /// Explicit grants started (sign-ins).
        var grants: Int = 0
        /// Store reads.
        var loads: Int = 0
        /// Renewals that failed (each one strategy call).
        var failedRenewals: Int = 0
        /// Failed renewals whose callers got the still-valid token instead (serve stale).
        var staleServed: Int = 0
        /// Tokens taken from a shared store that another process wrote, instead of renewing.
        var adoptions: Int = 0
        /// Renewals that waited for another process's lease.
        var leaseWaits: Int = 0
        /// Compare-and-swap writes to a shared store that lost to another process's write.
        var conflicts: Int = 0
        /// Renewals done without the shared store's coordination (it failed, or its lease
        /// was not released within the wait).
        var localRenewals: Int = 0
    }
}
