extension TokenBroker.StateMachine {
    /// Where one operation stands: what it waits for, and what it learnt of the shared store.
    struct Progress: Sendable {
        /// What the operation waits for, which says which event may come next.
        enum Phase: Sendable, Equatable {
            /// The store's token (a load).
            case loading
            /// The shared entry, read before the lease is asked for (the first read, or a poll
            /// while another process holds the lease).
            case readingBeforeLease
            /// The lease.
            case leasing
            /// The pause between two polls.
            case pausing
            /// The shared entry, re-read once the lease is held.
            case readingUnderLease
            /// The grant strategy.
            case obtaining
            /// The compare-and-swap of the renewed token.
            case swappingRenewal
            /// The shared entry after that compare-and-swap lost: the winner's token.
            case readingWinner
            /// The shared entry after the server refused the refresh token, before anything is
            /// wiped.
            case readingBeforeWipe
            /// The lease's release.
            case releasing
            /// The shared entry, before a sign-in's token is written over it.
            case readingBeforePublish
            /// The compare-and-swap of a sign-in's token.
            case swappingPublish
            /// The compare-and-swap that removes a refused entry.
            case swappingWipe
            /// A plain write to a private store (or the broker's ordered write).
            case writing
        }

        /// The operation's kind when it started.
        var kind: TokenBroker.StateMachine.OperationKind
        /// Why the operation runs the strategy.
        var reason: GrantContext.Reason
        /// The token the renewal replaces; after the shared entry is read, the stored token
        /// whose refresh token is the newest.
        var current: OAuth2Token?
        /// What the operation waits for.
        var phase: Phase
        /// Whether the renewal is coordinated through the shared store.
        var coordinated = false
        /// The entry version the renewal is based on: its write, or its wipe, is a
        /// compare-and-swap on it. `nil` when unknown.
        var baseVersion: UInt64?
        /// The token of the last entry read while waiting for the lease.
        var lastSeen: OAuth2Token?
        /// The lease this operation holds.
        var lease: TokenStoreLease?
        /// When a renewal waiting for another process's lease stops waiting: one
        /// ``TokenBroker/StateMachine/leaseWait`` after the renewal began.
        var waitDeadline: ContinuousClock.Instant?
        /// Whether the renewal has found the lease taken (counted once).
        var waited = false
        /// Whether the outcome came from the shared store rather than the server.
        var adopted = false
        /// Whether the outcome's write to the shared store was attempted (or is not wanted).
        var stored = false
        /// The entry's version once the outcome is stored (or adopted).
        var writtenVersion: UInt64?
        /// The token, or the error, the operation obtained.
        var outcome: Result<OAuth2Token, any Error>?
        /// How the operation ends once its last write or release is done.
        var pending: TokenBroker.StateMachine.Finish?
        /// Sign-in writes to the shared store that lost to another process's write.
        var publishConflicts = 0
        /// Whether logout abandoned the operation.
        var abandoned = false

        /// Creates the progress of an operation that starts.
        init(kind: TokenBroker.StateMachine.OperationKind, current: OAuth2Token?) {
            self.kind = kind
            self.current = current
            switch kind {
            case .load:
                reason = .noToken
                phase = .loading
            case .renew(let why):
                reason = why
                phase = .obtaining
            case .grant:
                reason = .requested
                phase = .obtaining
            }
        }

        /// The token obtained from the server that nobody will use once the operation is
        /// abandoned: revoked then. A token adopted from the shared store is other processes'
        /// too, and is never revoked.
        var orphan: OAuth2Token? {
            guard !adopted, case .success(let token) = outcome else { return nil }
            return token
        }
    }
}
