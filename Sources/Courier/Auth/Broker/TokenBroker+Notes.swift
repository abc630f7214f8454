import Logging

extension TokenBroker {
    /// The metadata key of the broker's log messages about its token's life, for a log
    /// handler that counts them: `renewed`, `adopted` (a token another process stored was
    /// used instead of renewing), `lease` (this process took the lease to renew),
    /// `conflict` (another process's write won), `degraded` (the shared store failed or its
    /// lease stayed taken; renewing without it).
    static let eventMetadataKey = "courier.token.event"

    /// Writes down what the state machine noted: log messages (never a token) and metrics.
    func report(_ notes: [StateMachine.Note]) {
        for note in notes {
            switch note {
            case .degraded(let reason):
                logger.warning(
                    "\(reason); the \(level) token is renewed without coordinating with other processes",
                    metadata: [Self.eventMetadataKey: "degraded"]
                )
            case .recovered:
                logger.info("the shared token store works again; \(level) renewals are coordinated")
            case .leaseTaken(let reason):
                logger.debug(
                    "took the lease to renew the \(level) token (\(reason.rawValue))",
                    metadata: [Self.eventMetadataKey: "lease"]
                )
            case .conflict(let version):
                logger.info(
                    "another process stored a \(level) token first (version \(version)); using it",
                    metadata: [Self.eventMetadataKey: "conflict"]
                )
            case .removedDuringRenewal:
                logger.info("the shared \(level) entry was removed during the renewal; the new token is not stored")
            case .refusedButRenewedElsewhere(let version):
                let message =
                    "the \(level) refresh token was refused, but another process had renewed the token "
                    + "(version \(version)): using its token, nothing wiped"
                logger.info("\(message)", metadata: [Self.eventMetadataKey: "adopted"])
            case .renewalStarted:
                instruments?.recordRenewal()
            case .renewalFailed:
                instruments?.recordFailure()
            case .operationFailed(let kind):
                logger.debug("\(level) token renewal failed: \(kind)")
            case .published(let version, let adopted, let reason):
                if adopted {
                    logger.debug(
                        "\(level) token taken from the shared store (\(reason.rawValue)): version \(version)",
                        metadata: [Self.eventMetadataKey: "adopted"]
                    )
                } else {
                    logger.debug(
                        "\(level) token renewed (\(reason.rawValue)): version \(version)",
                        metadata: [Self.eventMetadataKey: "renewed"]
                    )
                }
            case .servingStale(let kind, let retryIn):
                let wait = StateMachine.describe(retryIn.inSeconds)
                logger.warning(
                    "the \(level) token could not be renewed (\(kind)); it stays in use until it expires, next attempt in \(wait)"
                )
            case .writeFailed(let removal, let shared, let error):
                if removal {
                    let store = shared ? "shared store" : "store"
                    logger.error("the \(level) token could not be removed from the \(store): \(error)")
                } else {
                    // The server has already rotated the refresh token: the new one stays in
                    // memory rather than lose the session; the store catches up on the next write.
                    logger.error("the \(level) token could not be stored: \(error)")
                }
            case .wipeSkipped:
                logger.info("the shared \(level) entry moved on; it was not wiped")
            case .releaseFailed:
                logger.debug("the lease on the \(level) token could not be released; it times out")
            }
        }
    }
}
