import Foundation

extension TokenBroker.StateMachine {
    /// The time at which an event happened, as the machine needs it: the wall clock for token
    /// lifetimes, the monotonic clock for waits, and a random number for jitter — all from the
    /// actor, so that tests choose them.
    struct Moment: Sendable {
        /// The wall-clock time (token expiry, backoff, the loop guard).
        var date: Date
        /// The monotonic time (how long a renewal has waited for another process's lease).
        var instant: ContinuousClock.Instant
        /// A random number in `0...1` (backoff and polling jitter).
        var jitter: Double

        /// Creates a moment.
        init(date: Date, instant: ContinuousClock.Instant = .now, jitter: Double = 1) {
            self.date = date
            self.instant = instant
            self.jitter = jitter
        }
    }

    /// The next piece of I/O an operation does. The actor performs it and reports its result
    /// with the matching event (``storeRead(_:result:at:)``, ``entryRead(_:result:at:)``,
    /// ``leaseAcquired(_:result:at:)``, ``paused(_:)``, ``obtained(_:result:at:)``,
    /// ``written(_:result:at:)``, ``leaseReleased(_:failed:at:)``), which returns the step after.
    enum Step: Sendable {
        /// Read the level's token from the store: the entry with its version from a shared
        /// store, the token alone (version 0) from a private one.
        case readStore
        /// Read the shared entry with its version.
        case readEntry
        /// Take the shared entry's lease for this long, without waiting.
        case acquireLease(Duration)
        /// Wait this long (another process holds the lease), then report ``paused(_:)``.
        case pause(Duration)
        /// Run the grant strategy: renew `current` (or sign in, when `reason` is
        /// ``GrantContext/Reason/requested``).
        case obtain(current: OAuth2Token?, reason: GrantContext.Reason)
        /// Write `token` (`nil` removes it): with compare-and-swap on `ifVersion` when it is
        /// set, otherwise a plain write, ordered after the broker's earlier writes.
        case write(OAuth2Token?, ifVersion: UInt64?)
        /// End the lease this operation holds.
        case releaseLease(TokenStoreLease)
        /// The operation is over.
        case finish(Finish)
    }

    /// How an operation ends.
    enum Finish: Sendable {
        /// Its waiters get this token.
        case resolve(BrokeredToken)
        /// Its waiters get this error.
        case fail(any Error)
        /// Logout abandoned it; its waiters were already answered. A token it obtained, which
        /// nobody will use, is revoked.
        case discard(revoke: OAuth2Token?)
    }

    /// What the actor reports (logs, metrics) about a step: the machine decides, the actor
    /// writes it down.
    enum Note: Sendable, Equatable {
        /// The shared store failed, or another process held its lease too long: renewals go on
        /// without it. Once per episode.
        case degraded(String)
        /// The shared store works again.
        case recovered
        /// This process took the lease to renew.
        case leaseTaken(GrantContext.Reason)
        /// Another process's compare-and-swap won; its token (at `version`) is used.
        case conflict(version: UInt64)
        /// The shared entry was removed while this process renewed: the removal stands.
        case removedDuringRenewal
        /// The server refused the refresh token, but another process had renewed meanwhile: its
        /// token (at `version`) is used and nothing is wiped.
        case refusedButRenewedElsewhere(version: UInt64)
        /// A renewal asks the server (a strategy call that is not a sign-in).
        case renewalStarted
        /// A renewal failed (for metrics).
        case renewalFailed
        /// The operation failed with this kind of error (for the debug log).
        case operationFailed(CourierError.Kind)
        /// A new token is in service: renewed (or granted), or adopted from the shared store.
        case published(version: UInt64, adopted: Bool, reason: GrantContext.Reason)
        /// A renewal inside the leeway failed; the current token serves until it expires.
        case servingStale(CourierError.Kind, retryIn: Duration)
        /// A write to the store (the shared one, or a private one) failed; what the broker
        /// keeps in memory stands.
        case writeFailed(removal: Bool, shared: Bool, error: String)
        /// A wipe's compare-and-swap lost: another process wrote meanwhile, its token stays.
        case wipeSkipped
        /// A lease could not be released; it times out.
        case releaseFailed
    }
}
