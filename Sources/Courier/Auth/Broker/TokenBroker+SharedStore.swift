import Foundation
import Logging

extension TokenBroker {
    /// The metadata key of the broker's log messages about its token's life, for a log
    /// handler that counts them: `renewed`, `adopted` (a token another process stored was
    /// used instead of renewing), `lease` (this process took the lease to renew),
    /// `conflict` (another process's write won), `degraded` (the shared store failed or its
    /// lease stayed taken; renewing without it).
    static let eventMetadataKey = "courier.token.event"

    /// How one renewal went with a shared store.
    struct SharedRenewal: Sendable {
        /// Whether the shared store was consulted for this renewal.
        var coordinated = false
        /// A token another process stored, used instead of renewing.
        var adopted: OAuth2Token?
        /// The stored token whose refresh token the renewal presents.
        var renewWith: OAuth2Token?
        /// The entry version the renewal is based on: its write, or its wipe, is a
        /// compare-and-swap on it.
        var baseVersion: UInt64?
        /// The lease this process holds for the renewal.
        var lease: TokenStoreLease?
        /// The entry's version once the outcome is stored (or adopted).
        var writtenVersion: UInt64?
        /// Whether the outcome's write was attempted (successfully or not).
        var stored = false
    }

    /// Before a renewal with a shared store: use a token another process stored, or take the
    /// lease and renew from the stored entry.
    ///
    /// Reads the entry; a token there that differs from `current` and is not due for renewal
    /// is adopted. Otherwise it takes the entry's lease, re-reads the entry (another process
    /// may have finished a renewal just before) and renews from it. While another process
    /// holds the lease it polls the entry every 50–100 ms and adopts what that process
    /// writes. A store that fails, or a lease not released within
    /// ``Configuration/leaseWait``, lets the renewal go on alone, with a warning.
    func coordinateRenewal(current: OAuth2Token?, reason: GrantContext.Reason) async -> SharedRenewal {
        guard let sharedStore else { return SharedRenewal() }
        var renewal = SharedRenewal(coordinated: true)
        let deadline = ContinuousClock.now + configuration.leaseWait
        var waited = false
        do {
            var entry = try await sharedStore.entry(for: storeKey)
            while true {
                renewal.baseVersion = entry.version
                if adopt(entry, current: current, into: &renewal) { return renewal }
                if let lease = try await sharedStore.acquireLease(for: storeKey, duration: configuration.leaseDuration)
                {
                    renewal.lease = lease
                    logger.debug(
                        "took the lease to renew the \(level) token (\(reason.rawValue))",
                        metadata: [Self.eventMetadataKey: "lease"]
                    )
                    // The entry as it is now that no other process renews it: another may have
                    // written a token between the read above and the lease.
                    let settled = try await sharedStore.entry(for: storeKey)
                    renewal.baseVersion = settled.version
                    if adopt(settled, current: current, into: &renewal) { return renewal }
                    renewal.renewWith = settled.token
                    sharedStoreRecovered()
                    return renewal
                }
                if !waited {
                    waited = true
                    counters.leaseWaits += 1
                }
                guard ContinuousClock.now < deadline else {
                    sharedStoreDegraded(
                        because: "another process held the lease on the \(level) token for longer than "
                            + "\(configuration.leaseWait)"
                    )
                    counters.localRenewals += 1
                    renewal.renewWith = entry.token
                    return renewal
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 50...100)))
                entry = try await sharedStore.entry(for: storeKey)
            }
        } catch {
            sharedStoreDegraded(because: "the shared token store failed (\(Self.describe(error)))")
            counters.localRenewals += 1
            return renewal
        }
    }

    /// Adopts the entry's token when another process stored a usable one: not `current`, and
    /// not due for renewal.
    private func adopt(_ entry: TokenStoreEntry, current: OAuth2Token?, into renewal: inout SharedRenewal) -> Bool {
        guard let stored = entry.token, stored.accessToken != current?.accessToken,
            !stored.needsRenewal(at: now(), leeway: configuration.leeway)
        else { return false }
        renewal.adopted = stored
        renewal.writtenVersion = entry.version
        renewal.stored = true
        counters.adoptions += 1
        sharedStoreRecovered()
        return true
    }

    /// After the strategy ran, with a shared store: writes a new token with compare-and-swap
    /// on the version the renewal was based on, and adopts the winner's token when another
    /// process wrote first. Before a refused refresh token (`invalid_grant`) wipes anything,
    /// re-reads the entry: when another process renewed meanwhile, its token is adopted and
    /// nothing is wiped.
    ///
    /// - Returns: The outcome the state machine gets.
    func writeShared(
        _ result: Result<OAuth2Token, any Error>,
        renewal: inout SharedRenewal,
        replacing current: OAuth2Token?,
        isCurrent: Bool
    ) async -> Result<OAuth2Token, any Error> {
        // An operation that logout abandoned stores nothing: its token is revoked instead.
        guard renewal.coordinated, isCurrent, let sharedStore else { return result }
        switch result {
        case .success(let token):
            renewal.stored = true
            do {
                let base = renewal.baseVersion ?? sharedVersion
                if let written = try await sharedStore.setToken(token, for: storeKey, ifVersion: base) {
                    renewal.writtenVersion = written.version
                    return result
                }
                counters.conflicts += 1
                let winner = try await sharedStore.entry(for: storeKey)
                if let theirs = winner.token {
                    logger.info(
                        "another process stored a \(level) token first (version \(winner.version)); using it",
                        metadata: [Self.eventMetadataKey: "conflict"]
                    )
                    renewal.adopted = theirs
                    renewal.writtenVersion = winner.version
                    counters.adoptions += 1
                    return .success(theirs)
                }
                // The entry was removed meanwhile (a logout, a refused grant): the removal stands;
                // the new token serves this process only.
                logger.info("the shared \(level) entry was removed during the renewal; the new token is not stored")
            } catch {
                sharedStoreDegraded(
                    because: "the renewed \(level) token could not be written to the shared store "
                        + "(\(Self.describe(error)))"
                )
            }
            return result
        case .failure(let error):
            guard let failure = error as? CourierError, failure.kind == .grantRejected,
                failure.oauthError?.code == .invalidGrant
            else { return result }
            do {
                let entry = try await sharedStore.entry(for: storeKey)
                if let theirs = entry.token, theirs.refreshToken != current?.refreshToken {
                    let message =
                        "the \(level) refresh token was refused, but another process had renewed the token "
                        + "(version \(entry.version)): using its token, nothing wiped"
                    logger.info("\(message)", metadata: [Self.eventMetadataKey: "adopted"])
                    renewal.adopted = theirs
                    renewal.writtenVersion = entry.version
                    renewal.stored = true
                    counters.adoptions += 1
                    return .success(theirs)
                }
                renewal.baseVersion = entry.version
            } catch {
                sharedStoreDegraded(because: "the shared token store failed (\(Self.describe(error)))")
                // Unknown state: a wipe must not remove what another process may have written.
                renewal.baseVersion = nil
                renewal.stored = true
            }
            return result
        }
    }

    /// Ends the renewal's lease, if it holds one. A release that fails is harmless: the lease
    /// times out.
    func releaseLease(of renewal: inout SharedRenewal) async {
        guard let lease = renewal.lease, let sharedStore else { return }
        renewal.lease = nil
        do {
            try await sharedStore.releaseLease(lease)
        } catch {
            logger.debug("the lease on the \(level) token could not be released; it times out")
        }
    }

    /// Removes the level's shared entry after its grant was refused — with compare-and-swap
    /// on the version read, so that a token another process wrote meanwhile stays.
    func wipeShared(renewal: SharedRenewal) async {
        guard let sharedStore, !(renewal.stored && renewal.baseVersion == nil) else { return }
        let base = renewal.baseVersion ?? sharedVersion
        do {
            if let written = try await sharedStore.setToken(nil, for: storeKey, ifVersion: base) {
                sharedVersion = written.version
            } else {
                logger.info("the shared \(level) entry moved on; it was not wiped")
            }
        } catch {
            logger.error("the \(level) token could not be removed from the shared store: \(Self.describe(error))")
        }
    }

    /// Logs, once per episode, that the shared store is failing and the level renews alone.
    func sharedStoreDegraded(because reason: String) {
        guard !storeIsDegraded else { return }
        storeIsDegraded = true
        logger.warning(
            "\(reason); the \(level) token is renewed without coordinating with other processes",
            metadata: [Self.eventMetadataKey: "degraded"]
        )
    }

    /// Ends an episode of a failing shared store.
    func sharedStoreRecovered() {
        guard storeIsDegraded else { return }
        storeIsDegraded = false
        logger.info("the shared token store works again; \(level) renewals are coordinated")
    }

    /// An error for the log: a ``CourierError``'s message, or the error's description.
    private static func describe(_ error: any Error) -> String {
        (error as? CourierError).map { "\($0.kind): \($0.message)" } ?? "\(error)"
    }
}
