public import Foundation

/// A ``TokenStore`` that several processes share — the instances of one service behind a
/// load balancer, say — so that they renew each token once between them and never reuse a
/// refresh token another instance has rotated away.
///
/// Sharing needs two things a private store does not:
///
/// - **Versions.** Every entry carries a version that each write raises. A write names the
///   version it was based on (``setToken(_:for:ifVersion:)``) and fails when another process
///   wrote meanwhile, so a stale copy never overwrites — or wipes — a newer token.
/// - **Leases.** Before it renews a token, a broker takes the entry's lease
///   (``acquireLease(for:duration:)``). Among all processes, one holds it; the others wait,
///   re-reading the entry, and use the token the holder writes. A lease ends when its holder
///   releases it or when it times out, so a holder that dies is replaced.
///
/// With such a store a broker re-reads the shared entry before it renews, before it acts on
/// a rejection (HTTP 401) and before it wipes a token the server refused (`invalid_grant`).
/// When the store cannot be reached, the broker renews on its own and logs a warning: the
/// service keeps working, at the cost of one renewal per process.
///
/// `SQLiteTokenStore` (library `CourierSQLite`) is shared by the processes of one host, as is
/// ``EncryptedFileTokenStore`` for a handful of identities; `CourierPostgres` shares tokens
/// across hosts.
public protocol SharedTokenStore: TokenStore {
    /// The entry under `key` with its version.
    ///
    /// - Parameter key: Client id, level and user.
    /// - Returns: The entry; its version is 0 and its token `nil` when nothing was ever written.
    /// - Throws: ``CourierError`` when the store cannot be read or is damaged.
    func entry(for key: TokenStoreKey) async throws -> TokenStoreEntry

    /// Writes `token` under `key` (`nil` removes it) when the entry's version is still
    /// `version`; otherwise writes nothing.
    ///
    /// - Parameters:
    ///   - token: The token, or `nil`.
    ///   - key: Client id, level and user.
    ///   - version: The version the write is based on (0: nothing was written yet).
    /// - Returns: The entry as written, with its new, higher version; `nil` when the entry
    ///   had moved on and nothing was written.
    /// - Throws: ``CourierError`` when the store cannot be written.
    func setToken(
        _ token: OAuth2Token?,
        for key: TokenStoreKey,
        ifVersion version: UInt64
    ) async throws
        -> TokenStoreEntry?

    /// Takes the lease on `key` for `duration`, without waiting.
    ///
    /// - Parameters:
    ///   - key: Client id, level and user.
    ///   - duration: How long the lease holds unless released; after that another process
    ///     may take it.
    /// - Returns: The lease, or `nil` when another holder has it.
    /// - Throws: ``CourierError`` when the store cannot be reached.
    func acquireLease(for key: TokenStoreKey, duration: Duration) async throws -> TokenStoreLease?

    /// Ends a lease early. Releasing a lease that has timed out, or that another holder has
    /// taken since, changes nothing.
    ///
    /// - Parameter lease: The lease.
    /// - Throws: ``CourierError`` when the store cannot be reached; the lease then ends when
    ///   it times out.
    func releaseLease(_ lease: TokenStoreLease) async throws
}

/// A token in a ``SharedTokenStore``, with the version of the entry.
public struct TokenStoreEntry: Sendable, Hashable {
    /// The token; `nil` when there is none (never written, or removed).
    public var token: OAuth2Token?
    /// The entry's version: 0 before the first write, higher after each write (a removal too).
    public var version: UInt64

    /// Creates an entry.
    ///
    /// - Parameters:
    ///   - token: The token, or `nil`.
    ///   - version: The version.
    public init(token: OAuth2Token?, version: UInt64) {
        self.token = token
        self.version = version
    }
}

/// The right to renew one entry of a ``SharedTokenStore``, held by one process until it is
/// released or ``expiresAt``.
public struct TokenStoreLease: Sendable, Hashable {
    /// The entry it covers.
    public var key: TokenStoreKey
    /// Who holds it: a value unique to this acquisition.
    public var holder: String
    /// When it times out and another process may take it.
    public var expiresAt: Date

    /// Creates a lease.
    ///
    /// - Parameters:
    ///   - key: The entry it covers.
    ///   - holder: A value unique to this acquisition.
    ///   - expiresAt: When it times out.
    public init(key: TokenStoreKey, holder: String, expiresAt: Date) {
        self.key = key
        self.holder = holder
        self.expiresAt = expiresAt
    }
}
