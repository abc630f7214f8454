import Foundation

extension TokenBroker.StateMachine {
    // MARK: Starting

    /// The first step of an operation the actor launched (``TokenAction/start(_:current:)``,
    /// ``GrantAction/start(_:)``).
    mutating func firstStep(of id: OperationID, at moment: Moment) -> Step {
        guard let progress = progress[id], progress.phase == .loading || progress.phase == .obtaining else {
            return outOfOrder(id, "the start of an operation")
        }
        // Logout came before the operation's task first ran.
        if progress.abandoned { return cleanUp(id) }
        switch progress.kind {
        case .load:
            statistics.loads += 1
            return .readStore
        case .renew: return beginRenewal(id, at: moment)
        case .grant: return obtain(id)
        }
    }

    /// A renewal with a shared store reads the entry first; any other runs the strategy. The
    /// wait for another process's lease is measured from here.
    private mutating func beginRenewal(_ id: OperationID, at moment: Moment) -> Step {
        guard sharesStore, var progress = progress[id], progress.reason != .requested else { return obtain(id) }
        progress.coordinated = true
        progress.waitDeadline = moment.instant + leaseWait
        progress.phase = .readingBeforeLease
        self.progress[id] = progress
        return .readEntry
    }

    /// Runs the strategy (a renewal is counted; a sign-in is not).
    private mutating func obtain(_ id: OperationID) -> Step {
        guard var progress = progress[id] else { return outOfOrder(id, "a strategy call") }
        if progress.reason != .requested {
            statistics.renewals += 1
            notes.append(.renewalStarted)
        }
        progress.phase = .obtaining
        self.progress[id] = progress
        return .obtain(current: progress.current, reason: progress.reason)
    }

    // MARK: Events

    /// The store was read (``Step/readStore``). A shared store that fails is not fatal: the
    /// level starts without a token and renews on its own, as the other processes would; a
    /// damaged store is an error, never papered over with a new token.
    mutating func storeRead(_ id: OperationID, result: Result<TokenStoreEntry, any Error>, at moment: Moment) -> Step {
        guard var progress = progress[id], progress.phase == .loading else { return outOfOrder(id, "a store read") }
        if progress.abandoned { return cleanUp(id) }
        var result = result
        if sharesStore {
            switch result {
            case .failure(let error as CourierError) where Self.isDamage(error): break
            case .failure(let error):
                degrade("the shared token store could not be read (\(error))")
                result = .success(TokenStoreEntry(token: nil, version: 0))
            case .success: recover()
            }
        }
        let version = (try? result.get())?.version ?? 0
        switch loadCompleted(id, result: result.map(\.token), now: moment.date) {
        case .resolve(let token):
            sharedVersion = version
            self.progress[id] = nil
            return .finish(.resolve(token))
        case .fail(let error):
            self.progress[id] = nil
            return .finish(.fail(error))
        case .discard:
            return cleanUp(id)
        case .renew(let stored, let reason):
            sharedVersion = version
            progress.current = stored
            progress.reason = reason
            self.progress[id] = progress
            return beginRenewal(id, at: moment)
        }
    }

    /// The shared entry was read (``Step/readEntry``).
    mutating func entryRead(_ id: OperationID, result: Result<TokenStoreEntry, any Error>, at moment: Moment) -> Step {
        guard var progress = progress[id] else { return outOfOrder(id, "an entry read") }
        if progress.abandoned { return cleanUp(id) }
        switch (progress.phase, result) {
        case (.readingBeforeLease, .failure(let error)), (.readingUnderLease, .failure(let error)):
            return renewAlone(id, because: error)
        case (.readingBeforeLease, .success(let entry)):
            progress.baseVersion = entry.version
            progress.lastSeen = entry.token
            if adopt(entry, into: &progress, at: moment) { return settle(progress, id, at: moment) }
            progress.phase = .leasing
            self.progress[id] = progress
            return .acquireLease(leaseDuration)
        case (.readingUnderLease, .success(let entry)):
            // The entry as it is now that no other process renews it: another may have written
            // a token between the first read and the lease.
            progress.baseVersion = entry.version
            if adopt(entry, into: &progress, at: moment) { return settle(progress, id, at: moment) }
            if let stored = entry.token { progress.current = stored }
            self.progress[id] = progress
            recover()
            return obtain(id)
        case (.readingWinner, .success(let winner)):
            if let theirs = winner.token {
                notes.append(.conflict(version: winner.version))
                take(theirs, version: winner.version, into: &progress)
            } else {
                // A logout or a refused grant removed the entry meanwhile: the removal stands;
                // the new token serves this process only.
                notes.append(.removedDuringRenewal)
            }
            return settle(progress, id, at: moment)
        case (.readingWinner, .failure(let error)):
            degrade("the renewed \(level) token could not be written to the shared store (\(Self.describe(error)))")
            return settle(progress, id, at: moment)
        case (.readingBeforeWipe, .success(let entry)):
            if let theirs = entry.token, theirs.refreshToken != progress.current?.refreshToken {
                notes.append(.refusedButRenewedElsewhere(version: entry.version))
                take(theirs, version: entry.version, into: &progress)
            } else {
                progress.baseVersion = entry.version
            }
            return settle(progress, id, at: moment)
        case (.readingBeforeWipe, .failure(let error)):
            degrade("the shared token store failed (\(Self.describe(error)))")
            // Unknown state: a wipe must not remove what another process may have written.
            progress.baseVersion = nil
            progress.stored = true
            return settle(progress, id, at: moment)
        case (.readingBeforePublish, .success(let entry)):
            guard case .resolve(let published)? = progress.pending else { return outOfOrder(id, "an entry read") }
            progress.phase = .swappingPublish
            self.progress[id] = progress
            return .write(published.token, ifVersion: entry.version)
        case (.readingBeforePublish, .failure(let error)):
            notes.append(.writeFailed(removal: false, shared: true, error: "\(error)"))
            return finishPending(id)
        default:
            return outOfOrder(id, "an entry read")
        }
    }

    /// The lease was asked for (``Step/acquireLease(_:)``): held, taken by another process
    /// (`nil`), or the store failed.
    mutating func leaseAcquired(
        _ id: OperationID,
        result: Result<TokenStoreLease?, any Error>,
        at moment: Moment
    ) -> Step {
        guard var progress = progress[id], progress.phase == .leasing else { return outOfOrder(id, "a lease") }
        switch result {
        case .failure(let error):
            if progress.abandoned { return cleanUp(id) }
            return renewAlone(id, because: error)
        case .success(let lease?):
            progress.lease = lease
            self.progress[id] = progress
            if progress.abandoned { return cleanUp(id) }
            notes.append(.leaseTaken(progress.reason))
            self.progress[id]?.phase = .readingUnderLease
            return .readEntry
        case .success(nil):
            if progress.abandoned { return cleanUp(id) }
            if !progress.waited {
                progress.waited = true
                statistics.leaseWaits += 1
            }
            guard moment.instant < progress.waitDeadline ?? moment.instant + leaseWait else {
                degrade("another process held the lease on the \(level) token for longer than \(leaseWait)")
                statistics.localRenewals += 1
                if let seen = progress.lastSeen { progress.current = seen }
                self.progress[id] = progress
                return obtain(id)
            }
            progress.phase = .pausing
            self.progress[id] = progress
            // Poll every 50–100 ms, so that processes waiting for one lease do not read in step.
            return .pause(.milliseconds(50 + Int(50 * min(max(moment.jitter, 0), 1))))
        }
    }

    /// The pause between two polls of the entry ended (``Step/pause(_:)``).
    mutating func paused(_ id: OperationID) -> Step {
        guard let progress = progress[id], progress.phase == .pausing else { return outOfOrder(id, "a pause") }
        if progress.abandoned { return cleanUp(id) }
        self.progress[id]?.phase = .readingBeforeLease
        return .readEntry
    }

    /// The strategy returned (``Step/obtain(current:reason:)``). A coordinated renewal writes
    /// its token with compare-and-swap on the version it was based on; before a refused
    /// refresh token (`invalid_grant`) wipes anything, it re-reads the entry.
    mutating func obtained(_ id: OperationID, result: Result<OAuth2Token, any Error>, at moment: Moment) -> Step {
        guard var progress = progress[id], progress.phase == .obtaining else {
            return outOfOrder(id, "a strategy's result")
        }
        progress.outcome = result
        self.progress[id] = progress
        // An operation that logout abandoned stores nothing: its token is revoked instead.
        if progress.abandoned { return cleanUp(id) }
        guard progress.coordinated else { return settle(progress, id, at: moment) }
        switch result {
        case .success(let token):
            progress.stored = true
            progress.phase = .swappingRenewal
            self.progress[id] = progress
            return .write(token, ifVersion: progress.baseVersion ?? sharedVersion)
        case .failure(let error as CourierError)
        where error.kind == .grantRejected && error.oauthError?.code == .invalidGrant:
            self.progress[id]?.phase = .readingBeforeWipe
            return .readEntry
        case .failure:
            return settle(progress, id, at: moment)
        }
    }

    /// A write finished (``Step/write(_:ifVersion:)``): the entry as written, `nil` when a
    /// compare-and-swap lost (or for a plain write), or the store's error.
    mutating func written(_ id: OperationID, result: Result<TokenStoreEntry?, any Error>, at moment: Moment) -> Step {
        guard var progress = progress[id] else { return outOfOrder(id, "a write") }
        if progress.abandoned { return cleanUp(id) }
        switch (progress.phase, result) {
        case (.swappingRenewal, .success(let written?)):
            progress.writtenVersion = written.version
            return settle(progress, id, at: moment)
        case (.swappingRenewal, .success(nil)):
            statistics.conflicts += 1
            self.progress[id]?.phase = .readingWinner
            return .readEntry
        case (.swappingRenewal, .failure(let error)):
            degrade("the renewed \(level) token could not be written to the shared store (\(Self.describe(error)))")
            return settle(progress, id, at: moment)
        case (.swappingPublish, .success(let written?)), (.swappingWipe, .success(let written?)):
            sharedVersion = written.version
            return finishPending(id)
        case (.swappingPublish, .success(nil)):
            progress.publishConflicts += 1
            guard progress.publishConflicts < 3 else {
                let error = CourierError(
                    kind: .tokenStoreFailed,
                    message: "the shared \(level) entry kept changing while the token was written",
                    level: level
                )
                notes.append(.writeFailed(removal: false, shared: true, error: "\(error)"))
                return finishPending(id)
            }
            progress.phase = .readingBeforePublish
            self.progress[id] = progress
            return .readEntry
        case (.swappingWipe, .success(nil)):
            notes.append(.wipeSkipped)
            return finishPending(id)
        case (.swappingPublish, .failure(let error)):
            notes.append(.writeFailed(removal: false, shared: true, error: "\(error)"))
            return finishPending(id)
        case (.swappingWipe, .failure(let error)):
            notes.append(.writeFailed(removal: true, shared: true, error: Self.describe(error)))
            return finishPending(id)
        case (.writing, .success):
            return finishPending(id)
        case (.writing, .failure(let error)):
            let removal = if case .resolve? = progress.pending { false } else { true }
            notes.append(.writeFailed(removal: removal, shared: false, error: "\(error)"))
            return finishPending(id)
        default:
            return outOfOrder(id, "a write")
        }
    }

    /// The lease was released (``Step/releaseLease(_:)``); a release that failed is harmless,
    /// the lease times out.
    mutating func leaseReleased(_ id: OperationID, failed: Bool, at moment: Moment) -> Step {
        guard let progress = progress[id], progress.phase == .releasing else { return outOfOrder(id, "a release") }
        if failed { notes.append(.releaseFailed) }
        return complete(id, progress, at: moment)
    }

    /// The notes of the steps since the last call, oldest first.
    mutating func takeNotes() -> [Note] {
        guard !notes.isEmpty else { return [] }
        defer { notes = [] }
        return notes
    }

    // MARK: Helpers

    /// Adopts the entry's token when another process stored a usable one: not the token the
    /// renewal replaces, and not due for renewal itself.
    private mutating func adopt(_ entry: TokenStoreEntry, into progress: inout Progress, at moment: Moment) -> Bool {
        guard let stored = entry.token, stored.accessToken != progress.current?.accessToken,
            !stored.needsRenewal(at: moment.date, leeway: leeway)
        else { return false }
        take(stored, version: entry.version, into: &progress)
        recover()
        return true
    }

    /// Makes a token another process stored the operation's outcome.
    private mutating func take(_ token: OAuth2Token, version: UInt64, into progress: inout Progress) {
        progress.adopted = true
        progress.outcome = .success(token)
        progress.writtenVersion = version
        progress.stored = true
        statistics.adoptions += 1
    }

    /// The shared store failed during coordination: the renewal goes on alone.
    private mutating func renewAlone(_ id: OperationID, because error: any Error) -> Step {
        degrade("the shared token store failed (\(Self.describe(error)))")
        statistics.localRenewals += 1
        return obtain(id)
    }

    /// The outcome is settled: release the lease, if held, then complete.
    private mutating func settle(_ progress: Progress, _ id: OperationID, at moment: Moment) -> Step {
        var progress = progress
        guard let lease = progress.lease else { return complete(id, progress, at: moment) }
        progress.lease = nil
        progress.phase = .releasing
        self.progress[id] = progress
        return .releaseLease(lease)
    }

    /// Completes the operation in the machine, then stores what it decided: a new token (when
    /// the shared store does not have it yet), or the removal of a refused one.
    private mutating func complete(_ id: OperationID, _ progress: Progress, at moment: Moment) -> Step {
        var progress = progress
        self.progress[id] = progress
        if progress.abandoned { return cleanUp(id) }
        guard let outcome = progress.outcome else { return outOfOrder(id, "a completion") }
        switch operationCompleted(id, result: outcome, now: moment.date, jitter: moment.jitter) {
        case .publish(let token):
            notes.append(.published(version: token.version, adopted: progress.adopted, reason: progress.reason))
            progress.pending = .resolve(token)
            if progress.stored {
                if let version = progress.writtenVersion { sharedVersion = version }
                self.progress[id] = progress
                return finishPending(id)
            }
            // The server has already rotated the refresh token: the new one is kept in memory
            // even when the store cannot be written, and the store catches up on the next write.
            progress.phase = sharesStore ? .readingBeforePublish : .writing
            self.progress[id] = progress
            return sharesStore ? .readEntry : .write(token.token, ifVersion: nil)
        case .serveStale(let token, let error, let retryIn):
            statistics.failedRenewals += 1
            statistics.staleServed += 1
            notes.append(.renewalFailed)
            notes.append(.servingStale(error.kind, retryIn: retryIn))
            self.progress[id] = nil
            return .finish(.resolve(token))
        case .fail(let error, let wipe):
            if progress.reason != .requested {
                statistics.failedRenewals += 1
                notes.append(.renewalFailed)
            }
            notes.append(.operationFailed(error.kind))
            if case .failure(let cause) = outcome, cause is CancellationError {
                progress.pending = .fail(cause)
            } else {
                progress.pending = .fail(error)
            }
            guard wipe, !(sharesStore && progress.stored && progress.baseVersion == nil) else {
                self.progress[id] = progress
                return finishPending(id)
            }
            progress.phase = sharesStore ? .swappingWipe : .writing
            self.progress[id] = progress
            return .write(nil, ifVersion: sharesStore ? progress.baseVersion ?? sharedVersion : nil)
        case .discard:
            return cleanUp(id)
        }
    }

    /// Ends an operation that logout abandoned: its lease is released first, and a token it
    /// obtained from the server is revoked.
    private mutating func cleanUp(_ id: OperationID) -> Step {
        guard var progress = progress[id] else { return outOfOrder(id, "an abandoned operation's event") }
        if let lease = progress.lease {
            progress.lease = nil
            progress.phase = .releasing
            self.progress[id] = progress
            return .releaseLease(lease)
        }
        self.progress[id] = nil
        return .finish(.discard(revoke: progress.orphan))
    }

    /// Ends the operation as its completion decided.
    private mutating func finishPending(_ id: OperationID) -> Step {
        guard let pending = progress.removeValue(forKey: id)?.pending else { return outOfOrder(id, "a last write") }
        return .finish(pending)
    }

    /// An event that does not fit where the operation stands: a defect of the actor. The
    /// operation fails rather than hang its waiters; a lease it held times out.
    private mutating func outOfOrder(_ id: OperationID, _ event: String) -> Step {
        progress[id] = nil
        if operation?.id == id { abandonOperation() }
        return .finish(
            .fail(
                CourierError(
                    kind: .tokenRefreshFailed,
                    message: "the \(level) token broker received \(event) out of order",
                    level: level
                )
            )
        )
    }

    /// Starts an episode of a failing shared store (noted once).
    private mutating func degrade(_ reason: String) {
        guard !storeIsDegraded else { return }
        storeIsDegraded = true
        notes.append(.degraded(reason))
    }

    /// Ends an episode of a failing shared store.
    private mutating func recover() {
        guard storeIsDegraded else { return }
        storeIsDegraded = false
        notes.append(.recovered)
    }

    /// Whether `error` says the store is damaged or unreadable with this key, rather than
    /// out of reach.
    static func isDamage(_ error: CourierError) -> Bool {
        switch error.kind {
        case .tokenStoreTampered, .tokenStoreTruncated, .tokenStoreWrongKey, .tokenStoreUnsupportedFormat,
            .tokenStoreKeyUnavailable:
            true
        default: false
        }
    }

    /// An error for the log: a ``CourierError``'s message, or the error's description.
    static func describe(_ error: any Error) -> String {
        (error as? CourierError).map { "\($0.kind): \($0.message)" } ?? "\(error)"
    }
}
