import Foundation
import HTTPTypes

extension TokenBroker {
    /// The broker's decisions, as a plain value: no I/O, no awaits, no clock of its own.
    ///
    /// The actor feeds it events (a caller wants a token, a resource server rejected one, an
    /// operation finished, logout) and applies the action each returns. Tests drive it
    /// directly.
    ///
    /// - Every token gets a new ``version``. A rejection names the version it saw; only a
    ///   rejection of the *current* version starts a renewal, so a burst of 401s for one
    ///   token renews once and late 401s for an old token renew nothing.
    /// - At most one operation (load from the store, renewal, explicit grant) is in flight;
    ///   callers that need a token meanwhile join it.
    /// - The loop guard counts only renewals of a token that a resource server rejected right
    ///   after the machine obtained it (within ``RefreshLimit/freshness``); renewals for
    ///   expiry or the leeway never count. Past ``RefreshLimit/maximumRefreshes`` within
    ///   ``RefreshLimit/window``, the level answers ``CourierError/Kind/excessiveRefresh`` for
    ///   ``RefreshLimit/cooldown``, then renews again.
    /// - A failed renewal backs off (``RenewalBackoff``, at least as long as a 429 or 503
    ///   `Retry-After` asks). Meanwhile a token inside its leeway is still handed out; callers
    ///   without a usable token get the last failure at once, and nothing is sent.
    struct StateMachine: Sendable {
        typealias OperationID = UInt64

        /// What an operation does first.
        enum OperationKind: Sendable, Hashable {
            /// Read the store, then renew if the stored token is unusable.
            case load
            /// Run the level's strategy to replace the current token.
            case renew(GrantContext.Reason)
            /// Run a strategy the app passed (a sign-in).
            case grant
        }

        struct Operation: Sendable, Hashable {
            let id: OperationID
            let kind: OperationKind
        }

        /// What to do for a caller that wants a token.
        enum TokenAction: Sendable {
            /// Hand out this token.
            case use(BrokeredToken)
            /// Wait for the operation in flight.
            case join(OperationID)
            /// Start this operation and wait for it; `current` is the token it replaces.
            case start(Operation, current: OAuth2Token?)
            /// Fail the caller.
            case fail(CourierError)
        }

        /// What to do for a sign-in.
        enum GrantAction: Sendable {
            /// Start this grant and wait for it.
            case start(Operation)
            /// Another operation is in flight: wait for it to end, then ask again.
            case waitFor(OperationID)
        }

        /// What to do when a load from the store finished.
        enum LoadAction: Sendable {
            /// The stored token is usable: resolve the operation with it.
            case resolve(BrokeredToken)
            /// The stored token is missing or unusable: renew within the same operation.
            case renew(current: OAuth2Token?, reason: GrantContext.Reason)
            /// Fail the operation.
            case fail(CourierError)
            /// The operation was abandoned (logout); its waiters were already answered.
            case discard
        }

        /// What to do when a renewal or grant finished.
        enum CompletionAction: Sendable {
            /// Store the new token, then resolve the operation with it.
            case publish(BrokeredToken)
            /// Fail the operation; when `wipe` is set, also remove the level's stored token.
            case fail(CourierError, wipe: Bool)
            /// The renewal failed, but the current token has not expired (the renewal ran inside
            /// the leeway): resolve the operation with that token; the next renewal waits
            /// `retryIn`. `error` is why the renewal failed, for the log.
            case serveStale(BrokeredToken, error: CourierError, retryIn: Duration)
            /// The operation was abandoned (logout): drop its result.
            case discard
        }

        let level: AuthorizationLevel
        let leeway: Duration
        let refreshLimit: RefreshLimit
        let backoff: RenewalBackoff
        /// Whether other processes share the store: renewals are then coordinated through it.
        let sharesStore: Bool
        /// With a shared store: how long a renewal's lease holds.
        let leaseDuration: Duration
        /// With a shared store: how long a renewal waits for another process's lease before it
        /// renews on its own — one and a half lease durations, so that a lease whose holder
        /// died times out, and a waiter takes it, within the wait.
        var leaseWait: Duration { leaseDuration + leaseDuration / 2 }

        /// Counts of loads, renewals, grants and the shared store's outcomes.
        var statistics = TokenBroker.Statistics()
        /// With a shared store: the version of the entry the current token came from or went
        /// to (0 when unknown).
        var sharedVersion: UInt64 = 0
        /// With a shared store: whether it is failing (or its lease is stuck) at the moment.
        var storeIsDegraded = false
        /// Where each operation in flight stands (one, and briefly an abandoned one).
        var progress: [OperationID: Progress] = [:]
        /// What happened since the actor last asked (``takeNotes()``).
        var notes: [Note] = []

        private(set) var token: OAuth2Token?
        private(set) var version: UInt64 = 0
        private(set) var operation: Operation?
        private(set) var isLoaded = false
        /// The version a resource server rejected, while it is still current.
        private var rejectedVersion: UInt64?
        private var nextOperationID: OperationID = 1
        /// When an operation of this machine obtained the current token; `nil` for a token
        /// read from the store.
        private var obtainedAt: Date?
        /// The renewal in flight when it replaces a token rejected right after it was obtained.
        private var loopRenewal: OperationID?
        /// When renewals that replaced a token rejected right after it was obtained
        /// succeeded, oldest first: what the loop guard counts.
        private var loopRenewals: [Date] = []
        /// Until when the tripped loop guard refuses renewals after a rejection.
        private(set) var guardClosedUntil: Date?
        /// Renewals that failed in a row since the last success.
        private(set) var consecutiveFailures = 0
        /// No renewal starts before this time (backoff, `Retry-After`).
        private(set) var retryAt: Date?
        /// Why the last renewal failed: what callers get while the machine backs off.
        private var lastFailure: CourierError?

        /// Creates a machine.
        ///
        /// - Parameters:
        ///   - level: The level whose token it manages.
        ///   - leeway: How long before expiry a token is renewed.
        ///   - refreshLimit: The refresh-loop guard.
        ///   - backoff: How long to wait after failed renewals.
        ///   - sharesStore: Whether other processes share the store.
        ///   - leaseDuration: With a shared store, how long a renewal's lease holds.
        init(
            level: AuthorizationLevel,
            leeway: Duration,
            refreshLimit: RefreshLimit,
            backoff: RenewalBackoff = RenewalBackoff(),
            sharesStore: Bool = false,
            leaseDuration: Duration = .seconds(10)
        ) {
            self.level = level
            self.leeway = leeway
            self.refreshLimit = refreshLimit
            self.backoff = backoff
            self.sharesStore = sharesStore
            self.leaseDuration = leaseDuration
        }

        /// The token a caller may use without asking the actor, and until when: `nil` while
        /// the store is unread, the current token was rejected, or a renewal is in flight that
        /// callers must wait for (one that is not ahead of expiry).
        ///
        /// While the machine backs off, a token inside its leeway is served until the next
        /// attempt is due (or the token expires, whichever comes first).
        var fastPathToken: (token: BrokeredToken, renewAt: Date)? {
            guard isLoaded, let token, rejectedVersion != version else { return nil }
            if operation != nil {
                // A renewal ahead of expiry: the current token serves until it expires.
                guard let kept = tokenKeptDuringRenewal else { return nil }
                return (BrokeredToken(token: kept, version: version), kept.expiresAt ?? .distantFuture)
            }
            var renewAt = token.renewalDate(leeway: leeway) ?? .distantFuture
            if let retryAt, retryAt > renewAt { renewAt = min(retryAt, token.expiresAt ?? retryAt) }
            return (BrokeredToken(token: token, version: version), renewAt)
        }

        /// The token callers keep while a renewal ahead of expiry (inside the leeway) runs: it
        /// is good until it expires, however long the renewal (or the shared store it first
        /// waits for) takes. `nil` when no such renewal runs or the token was rejected.
        private var tokenKeptDuringRenewal: OAuth2Token? {
            guard operation?.kind == .renew(.expired), let token, rejectedVersion != version else { return nil }
            return token
        }

        // MARK: Events

        /// A caller wants a token.
        mutating func tokenRequested(now: Date) -> TokenAction {
            if let operation {
                if let kept = tokenKeptDuringRenewal, !kept.hasExpired(at: now) {
                    return .use(BrokeredToken(token: kept, version: version))
                }
                return .join(operation.id)
            }
            guard isLoaded else { return .start(makeOperation(.load), current: nil) }
            guard let token else { return startRenewal(.noToken, now: now) }
            if rejectedVersion == version { return startRenewal(.rejected, now: now) }
            if token.needsRenewal(at: now, leeway: leeway) {
                // Serve stale: while backing off, a token that has not expired is still good.
                if isBackingOff(at: now), !token.hasExpired(at: now) {
                    return .use(BrokeredToken(token: token, version: version))
                }
                return startRenewal(.expired, now: now)
            }
            return .use(BrokeredToken(token: token, version: version))
        }

        /// A resource server rejected the token of `rejected` version.
        ///
        /// Only a rejection of the current version renews; for an older version the current
        /// token (or the renewal producing it) is the answer.
        mutating func tokenRejected(version rejected: UInt64, now: Date) -> TokenAction {
            if let operation { return .join(operation.id) }
            guard isLoaded, rejected == version, token != nil else { return tokenRequested(now: now) }
            rejectedVersion = version
            return startRenewal(.rejected, now: now)
        }

        /// The app asks for a grant: it starts now, or after the operation in flight.
        mutating func grantRequested() -> GrantAction {
            if let operation { return .waitFor(operation.id) }
            statistics.grants += 1
            return .start(makeOperation(.grant))
        }

        /// The store was read.
        mutating func loadCompleted(_ id: OperationID, result: Result<OAuth2Token?, any Error>, now: Date) -> LoadAction
        {
            guard operation?.id == id else { return .discard }
            switch result {
            case .failure(let error):
                operation = nil
                return .fail(.tokenStore(error, level: level, "the \(level) token could not be read from the store"))
            case .success(let stored):
                isLoaded = true
                if let stored {
                    token = stored
                    version += 1
                    rejectedVersion = nil
                    obtainedAt = nil
                    if !stored.needsRenewal(at: now, leeway: leeway) {
                        operation = nil
                        return .resolve(BrokeredToken(token: stored, version: version))
                    }
                }
                let reason: GrantContext.Reason = stored == nil ? .noToken : .expired
                operation = Operation(id: id, kind: .renew(reason))
                return .renew(current: stored, reason: reason)
            }
        }

        /// A renewal or grant finished.
        ///
        /// A success resets the backoff. A failed renewal (not a sign-in) backs off: the next
        /// one waits ``RenewalBackoff/delay(afterFailures:jitter:)``, or longer when a 429 or
        /// 503 asked so with `Retry-After`. A strategy that has nothing to renew with
        /// (``CourierError/Kind/userNotAuthenticated``: no refresh token, no user) asked no
        /// server and does not back off. When that renewal ran inside the leeway and the
        /// token has not expired, its waiters get that token instead of the error.
        ///
        /// - Parameters:
        ///   - id: The operation.
        ///   - result: Its token or error.
        ///   - now: The current time.
        ///   - jitter: A random number in `0...1` that spreads the backoff.
        mutating func operationCompleted(
            _ id: OperationID,
            result: Result<OAuth2Token, any Error>,
            now: Date,
            jitter: Double
        )
            -> CompletionAction
        {
            guard let finished = operation, finished.id == id else { return .discard }
            operation = nil
            let countsTowardLimit = loopRenewal == id
            loopRenewal = nil
            switch result {
            case .success(let new):
                if countsTowardLimit { loopRenewals.append(now) }
                token = new
                version += 1
                rejectedVersion = nil
                isLoaded = true
                obtainedAt = now
                consecutiveFailures = 0
                retryAt = nil
                lastFailure = nil
                return .publish(BrokeredToken(token: new, version: version))
            case .failure(let error):
                guard finished.kind != .grant else { return classify(error, explicit: true) }
                guard case .fail(let failure, let wipe) = classify(error, explicit: false) else {
                    return .discard
                }
                // Nothing to renew with (no refresh token, no user): the strategy asked no server,
                // and only a sign-in helps. No backoff, so the sign-in's token is usable at once.
                if (error as? CourierError)?.kind == .userNotAuthenticated { return .fail(failure, wipe: wipe) }
                consecutiveFailures += 1
                var delay = backoff.delay(afterFailures: consecutiveFailures, jitter: jitter)
                if let asked = Self.retryAfter(failure, now: now) {
                    delay = max(delay, min(asked, backoff.maximumRetryAfter))
                }
                retryAt = now.addingTimeInterval(delay.inSeconds)
                lastFailure = failure
                if !wipe, finished.kind == .renew(.expired), let token, rejectedVersion != version,
                    !token.hasExpired(at: now)
                {
                    return .serveStale(BrokeredToken(token: token, version: version), error: failure, retryIn: delay)
                }
                return .fail(backingOff(failure, now: now), wipe: wipe)
            }
        }

        /// Logout: forget the token and abandon the operation in flight, whose waiters the
        /// actor fails; the backoff and the loop guard start afresh. Returns that operation's id.
        mutating func wiped() -> OperationID? {
            let abandoned = operation?.id
            // Every operation still running is abandoned: the one in flight, and a sign-in whose
            // token is being written (it must not put the token back after the removal).
            for id in progress.keys { progress[id]?.abandoned = true }
            abandonOperation()
            token = nil
            obtainedAt = nil
            // A fresh start (logout, another user): nothing from before holds the level back.
            loopRenewals = []
            guardClosedUntil = nil
            consecutiveFailures = 0
            retryAt = nil
            lastFailure = nil
            version += 1
            rejectedVersion = nil
            isLoaded = true
            return abandoned
        }

        // MARK: Helpers

        private mutating func makeOperation(_ kind: OperationKind) -> Operation {
            let operation = Operation(id: nextOperationID, kind: kind)
            nextOperationID += 1
            self.operation = operation
            progress[operation.id] = Progress(kind: kind, current: token)
            return operation
        }

        /// Forgets the operation in flight (its waiters are answered by the actor).
        mutating func abandonOperation() {
            operation = nil
            loopRenewal = nil
        }

        /// Starts a renewal unless the loop guard or the backoff forbids it.
        private mutating func startRenewal(_ reason: GrantContext.Reason, now: Date) -> TokenAction {
            var countsTowardLimit = false
            if reason == .rejected {
                if let until = guardClosedUntil, now < until { return .fail(loopGuardError(until: until, now: now)) }
                guardClosedUntil = nil
                // Only a token rejected right after this machine obtained it can be part of a
                // refresh loop; one that served for a while and was then revoked cannot.
                if let obtainedAt, now.timeIntervalSince(obtainedAt) <= RefreshLimit.freshness.inSeconds {
                    let windowStart = now.addingTimeInterval(-refreshLimit.window.inSeconds)
                    loopRenewals.removeAll { $0 <= windowStart }
                    if loopRenewals.count >= refreshLimit.maximumRefreshes {
                        loopRenewals.removeAll()
                        let until = now.addingTimeInterval(RefreshLimit.cooldown.inSeconds)
                        guardClosedUntil = until
                        return .fail(loopGuardError(until: until, now: now))
                    }
                    countsTowardLimit = true
                }
            }
            if isBackingOff(at: now), let lastFailure { return .fail(backingOff(lastFailure, now: now)) }
            let operation = makeOperation(.renew(reason))
            if countsTowardLimit { loopRenewal = operation.id }
            return .start(operation, current: token)
        }

        /// Whether a failed renewal's backoff is still running at `now`.
        private func isBackingOff(at now: Date) -> Bool {
            guard let retryAt else { return false }
            return now < retryAt
        }

        /// The error of a tripped loop guard, saying how long it stays closed.
        private func loopGuardError(until: Date, now: Date) -> CourierError {
            CourierError(
                kind: .excessiveRefresh,
                message: "the \(level) token was rejected right after each of \(refreshLimit.maximumRefreshes) "
                    + "renewals within \(refreshLimit.window): a resource server refuses fresh tokens; not renewing "
                    + "the \(level) token for another \(Self.describe(until.timeIntervalSince(now)))",
                level: level
            )
        }

        /// `failure`, with how long until the next renewal attempt added to its message.
        private func backingOff(_ failure: CourierError, now: Date) -> CourierError {
            let wait = max(0, (retryAt ?? now).timeIntervalSince(now))
            let reason = failure.message.isEmpty ? "the \(level) token renewal failed" : failure.message
            return CourierError(
                kind: failure.kind,
                message: "\(reason); the next \(level) token renewal attempt is in \(Self.describe(wait))",
                level: failure.level ?? level,
                oauthError: failure.oauthError,
                statusCode: failure.statusCode,
                endpoint: failure.endpoint,
                response: failure.response,
                underlying: failure.underlying
            )
        }

        /// The delay a 429 or 503 asked for with `Retry-After`, in `error` or the errors under it.
        static func retryAfter(_ error: CourierError, now: Date) -> Duration? {
            var next: CourierError? = error
            while let current = next {
                if let status = current.statusCode, status == 429 || status == 503,
                    let value = current.response?.headerFields[.retryAfter]
                {
                    return RetryAfter.delay(value, now: now)
                }
                next = current.underlying as? CourierError
            }
            return nil
        }

        /// A short, readable length of time: `250 ms`, `2.5 s`.
        static func describe(_ interval: TimeInterval) -> String {
            if interval < 0.9995 { return "\(Int((interval * 1000).rounded())) ms" }
            return "\((interval * 10).rounded() / 10) s"
        }

        /// The error for waiters of a failed operation, and whether the level's tokens go.
        private mutating func classify(_ error: any Error, explicit: Bool) -> CompletionAction {
            var authError: CourierError
            if let error = error as? CourierError {
                authError = error
            } else {
                authError = CourierError(
                    kind: .tokenRefreshFailed,
                    message: "the \(level) grant strategy failed",
                    level: level,
                    underlying: error
                )
            }
            if authError.level == nil { authError.level = level }
            guard !explicit else { return .fail(authError, wipe: false) }
            // A refresh token the server no longer accepts (revoked, expired, rotated away) and
            // a level that has nothing to renew with both mean: sign in again.
            let grantGone = authError.kind == .grantRejected && authError.oauthError?.code == .invalidGrant
            if grantGone || authError.kind == .userNotAuthenticated {
                token = nil
                obtainedAt = nil
                version += 1
                rejectedVersion = nil
                if grantGone {
                    // A copy, not `authError` itself: reading and replacing the same variable in
                    // one expression crashes Swift 6.3.1's optimizer (release builds).
                    let rejected = authError
                    authError = CourierError(
                        kind: .userNotAuthenticated,
                        message:
                            "the \(level) refresh token was rejected (invalid_grant); the \(level) tokens were wiped",
                        level: level,
                        oauthError: rejected.oauthError,
                        statusCode: rejected.statusCode,
                        endpoint: rejected.endpoint,
                        underlying: rejected
                    )
                }
                return .fail(authError, wipe: true)
            }
            return .fail(authError, wipe: false)
        }
    }
}
