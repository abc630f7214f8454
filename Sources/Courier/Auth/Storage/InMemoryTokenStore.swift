import Foundation

/// Tokens in memory, lost when the process ends. The default store.
///
/// It is a ``SharedTokenStore`` for the brokers of one process: every entry has a version
/// and a lease, so several clients that share one instance renew each token once between
/// them — and tests can play a fleet with several clients on one store.
public final class InMemoryTokenStore: SharedTokenStore {
    private struct State {
        var entries: [TokenStoreKey: TokenStoreEntry] = [:]
        var leases: [TokenStoreKey: TokenStoreLease] = [:]
    }

    private let state = LockedBox(State())

    /// Creates an empty store.
    public init() {}

    /// The token under `key`.
    public func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
        state.withLock { $0.entries[key]?.token }
    }

    /// Stores or removes the token under `key`, raising its version.
    public func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
        state.withLock { state in
            let version = state.entries[key]?.version ?? 0
            state.entries[key] = TokenStoreEntry(token: token, version: version + 1)
        }
    }

    /// Removes every token of the client, raising each removed entry's version.
    public func removeTokens(clientID: String) async throws {
        state.withLock { state in
            for (key, entry) in state.entries where key.clientID == clientID && entry.token != nil {
                state.entries[key] = TokenStoreEntry(token: nil, version: entry.version + 1)
            }
        }
    }

    /// Removes every token of one user of the client, raising each removed entry's version.
    public func removeTokens(clientID: String, user: String?) async throws {
        state.withLock { state in
            for (key, entry) in state.entries
            where key.clientID == clientID && key.user == user && entry.token != nil {
                state.entries[key] = TokenStoreEntry(token: nil, version: entry.version + 1)
            }
        }
    }

    /// The entry under `key` with its version (0 when nothing was ever written).
    public func entry(for key: TokenStoreKey) async throws -> TokenStoreEntry {
        state.withLock { $0.entries[key] ?? TokenStoreEntry(token: nil, version: 0) }
    }

    /// Writes `token` under `key` when the entry is still at `version`.
    public func setToken(
        _ token: OAuth2Token?,
        for key: TokenStoreKey,
        ifVersion version: UInt64
    ) async throws
        -> TokenStoreEntry?
    {
        state.withLock { state in
            let current = state.entries[key]?.version ?? 0
            guard current == version else { return nil }
            let written = TokenStoreEntry(token: token, version: current + 1)
            state.entries[key] = written
            return written
        }
    }

    /// Takes the lease on `key` unless another holder has it and it has not timed out.
    public func acquireLease(for key: TokenStoreKey, duration: Duration) async throws -> TokenStoreLease? {
        let now = Date()
        return state.withLock { state in
            if let held = state.leases[key], held.expiresAt > now { return nil }
            let lease = TokenStoreLease(
                key: key,
                holder: UUID().uuidString,
                expiresAt: now.addingTimeInterval(duration.inSeconds)
            )
            state.leases[key] = lease
            return lease
        }
    }

    /// Ends the lease if it is still the current one.
    public func releaseLease(_ lease: TokenStoreLease) async throws {
        state.withLock { state in
            if state.leases[lease.key]?.holder == lease.holder { state.leases[lease.key] = nil }
        }
    }
}
