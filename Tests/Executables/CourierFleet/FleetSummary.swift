/// What one fleet member did: printed as one JSON line when it ends.
public struct FleetSummary: Sendable, Codable, Hashable {
    /// The member's name.
    public var member: String
    /// Its process id.
    public var pid: Int32
    /// The level its callers used.
    public var level: String
    /// Requests sent.
    public var requests: Int
    /// Requests answered with a 2xx status.
    public var successes: Int
    /// Failed requests by kind: a ``Courier/CourierError/Kind`` name, `status-<code>`, or
    /// `other`.
    public var failures: [String: Int]
    /// Renewals this member's brokers performed (each one token request).
    public var renewals: Int
    /// Tokens it took from the shared store instead of renewing.
    public var adopted: Int
    /// Leases it took to renew.
    public var leases: Int
    /// Its compare-and-swap writes that lost to another member's.
    public var conflicts: Int
    /// Episodes in which it renewed without the shared store (store failing, lease stuck).
    public var degraded: Int
    /// Warnings its brokers logged.
    public var warnings: Int
    /// How long it sent requests, in seconds.
    public var seconds: Double

    /// Failed requests, of every kind.
    public var failureCount: Int { failures.values.reduce(0, +) }
}
