import Foundation

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
    /// - Renewals of an existing token that succeed are counted per time window; past the
    ///   limit, callers get ``CourierError/Kind/excessiveRefresh`` instead of another renewal.
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
            /// The operation was abandoned (logout): drop its result.
            case discard
        }

        let level: AuthorizationLevel
        let leeway: Duration
        let refreshLimit: RefreshLimit

        private(set) var token: OAuth2Token?
        private(set) var version: UInt64 = 0
        private(set) var operation: Operation?
        private(set) var isLoaded = false
        /// The version a resource server rejected, while it is still current.
        private var rejectedVersion: UInt64?
        private var nextOperationID: OperationID = 1
        /// When recent renewals succeeded, oldest first.
        private var renewalTimes: [Date] = []

        init(level: AuthorizationLevel, leeway: Duration, refreshLimit: RefreshLimit) {
            self.level = level
            self.leeway = leeway
            self.refreshLimit = refreshLimit
        }

        /// The token a caller may use without asking the actor, and until when: `nil` while
        /// the store is unread, the current token was rejected, or a renewal is in flight.
        var fastPathToken: (token: BrokeredToken, renewAt: Date)? {
            guard isLoaded, operation == nil, let token, rejectedVersion != version else { return nil }
            let renewAt = token.renewalDate(leeway: leeway) ?? .distantFuture
            return (BrokeredToken(token: token, version: version), renewAt)
        }

        // MARK: Events

        /// A caller wants a token.
        mutating func tokenRequested(now: Date) -> TokenAction {
            if let operation { return .join(operation.id) }
            guard isLoaded else { return .start(makeOperation(.load), current: nil) }
            guard let token else { return startRenewal(.noToken, now: now) }
            if rejectedVersion == version { return startRenewal(.rejected, now: now) }
            if token.needsRenewal(at: now, leeway: leeway) { return startRenewal(.expired, now: now) }
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

        /// The app asks for a grant; `nil` while another operation is in flight (wait for it
        /// first, then ask again).
        mutating func grantRequested() -> Operation? {
            guard operation == nil else { return nil }
            return makeOperation(.grant)
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
                    if !stored.needsRenewal(at: now, leeway: leeway) {
                        operation = nil
                        return .resolve(BrokeredToken(token: stored, version: version))
                    }
                }
                let reason: GrantContext.Reason = stored == nil ? .noToken : .expired
                if let error = limitExceeded(now: now) {
                    operation = nil
                    return .fail(error)
                }
                operation = Operation(id: id, kind: .renew(reason))
                return .renew(current: stored, reason: reason)
            }
        }

        /// A renewal or grant finished.
        mutating func operationCompleted(
            _ id: OperationID,
            result: Result<OAuth2Token, any Error>,
            now: Date
        )
            -> CompletionAction
        {
            guard let finished = operation, finished.id == id else { return .discard }
            operation = nil
            switch result {
            case .success(let new):
                // The loop guard counts replacements of a token that existed; a first token
                // (no token, or a sign-in) cannot be part of a refresh loop.
                if case .renew(let reason) = finished.kind, reason != .noToken { renewalTimes.append(now) }
                token = new
                version += 1
                rejectedVersion = nil
                isLoaded = true
                return .publish(BrokeredToken(token: new, version: version))
            case .failure(let error):
                let explicit = finished.kind == .grant
                return classify(error, explicit: explicit)
            }
        }

        /// Logout: forget the token and abandon the operation in flight, whose waiters the
        /// actor fails. Returns that operation's id.
        mutating func wiped() -> OperationID? {
            let abandoned = operation?.id
            operation = nil
            token = nil
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
            return operation
        }

        private mutating func startRenewal(_ reason: GrantContext.Reason, now: Date) -> TokenAction {
            if let error = limitExceeded(now: now) { return .fail(error) }
            return .start(makeOperation(.renew(reason)), current: token)
        }

        /// The excessive-refresh error when the window already holds the maximum of renewals.
        private mutating func limitExceeded(now: Date) -> CourierError? {
            let windowStart = now.addingTimeInterval(-refreshLimit.window.authTimeInterval)
            renewalTimes.removeAll { $0 <= windowStart }
            guard renewalTimes.count >= refreshLimit.maximumRefreshes else { return nil }
            return CourierError(
                kind: .excessiveRefresh,
                message: "the \(level) token was renewed \(renewalTimes.count) times within "
                    + "\(refreshLimit.window) and is still rejected; not renewing again",
                level: level
            )
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
