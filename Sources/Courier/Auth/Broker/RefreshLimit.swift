import Foundation

/// The refresh-loop guard: how many renewals of a freshly rejected token a broker allows
/// within a time window before it refuses with ``CourierError/Kind/excessiveRefresh``.
///
/// A resource server that rejects every token it is given would make a client renew forever.
/// Only such renewals count: a token rejected within ``freshness`` of being obtained. Renewals
/// for expiry or the leeway, of a stored token, or of a token that served for a while never
/// count, however short-lived the tokens are.
///
/// When the guard trips, the level answers ``CourierError/Kind/excessiveRefresh`` for
/// ``cooldown``, then renews again, counting afresh.
struct RefreshLimit: Sendable, Hashable {
    /// The most successful renewals of a freshly rejected token within ``window``.
    var maximumRefreshes: Int
    /// The sliding window.
    var window: Duration

    /// How long after a broker obtained a token a rejection of it counts toward the guard
    /// (10 seconds): long enough for a request and its 401 on a slow network, short enough
    /// that a token revoked after it served a while is not taken for a loop.
    static let freshness: Duration = .seconds(10)

    /// How long a tripped guard refuses renewals after a rejection (5 seconds): a level that
    /// loops is stopped, never locked out for long.
    static let cooldown: Duration = .seconds(5)

    /// Creates a limit.
    ///
    /// - Parameters:
    ///   - maximumRefreshes: The most renewals within the window (5 by default).
    ///   - window: The window (30 seconds by default).
    init(maximumRefreshes: Int = 5, window: Duration = .seconds(30)) {
        self.maximumRefreshes = max(1, maximumRefreshes)
        self.window = window
    }
}
