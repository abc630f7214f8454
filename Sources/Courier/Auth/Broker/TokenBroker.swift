import Foundation
import Logging
import Synchronization

/// Hands out a valid access token for one authorization level of one client, renewing it
/// when needed — once, however many callers are waiting.
///
/// ```swift
/// let broker = TokenBroker(level: .device, endpoint: endpoint, strategy: ClientCredentialsGrant())
/// let token = try await broker.token()          // BrokeredToken
/// request.headerFields[.authorization] = token.token.authorizationValue
/// // … a 401 for it:
/// let renewed = try await broker.tokenRejected(token)
/// ```
///
/// ### What it guarantees
///
/// - **One renewal at a time.** When the token is missing, expired, within
///   ``Configuration/leeway`` of expiry, or rejected, the first caller starts one operation —
///   the level's ``GrantStrategy`` — and every concurrent caller awaits that same operation.
///   Its result, token or error, reaches every waiter.
/// - **Cancellation is per waiter.** A cancelled caller stops waiting with
///   `CancellationError`; the renewal goes on for the others, because it runs in a task of
///   its own.
/// - **Versions.** ``tokenRejected(_:)`` renews only when the rejected token is still the
///   current one. A burst of 401s for one token causes one renewal; a late 401 for a token
///   already replaced causes none.
/// - **A wiped grant means sign in again.** A renewal refused with `invalid_grant` (the
///   refresh token was revoked or rotated away) wipes the level's tokens, in memory and in
///   the store, and callers get ``CourierError/Kind/userNotAuthenticated``.
/// - **No refresh loops.** A resource server that rejects every fresh token trips the loop
///   guard (``RefreshLimit``): more than ``RefreshLimit/maximumRefreshes`` renewals of a token
///   rejected right after it was obtained, within ``RefreshLimit/window``, give
///   ``CourierError/Kind/excessiveRefresh`` for ``RefreshLimit/cooldown``. Renewals for
///   expiry never count.
/// - **No storms at the token endpoint.** A failed renewal backs off (``RenewalBackoff``;
///   a 429 or 503 `Retry-After` makes it longer). However many callers wait or arrive, the
///   endpoint sees at most one attempt per backoff step: a caller without a usable token
///   gets the last failure at once, with the time of the next attempt in its message.
/// - **Serve stale.** A renewal inside the leeway that fails leaves the token in service
///   until it expires: callers get it, and the renewal is tried again after the backoff.
/// - **Store first.** A new token is written to the ``TokenStore`` (with rotation, the new
///   refresh token replaces the old one in one write) before waiters get it, so a process
///   that stops right after a refresh restarts with the refresh token the server expects.
///
/// - **A fleet renews once.** With a ``SharedTokenStore`` (other processes use the same
///   entry), a renewal first re-reads the entry and uses a token another process stored;
///   otherwise it takes the entry's lease, renews from the stored refresh token and writes
///   with compare-and-swap, while the other processes wait and take its token. A rejection or
///   an `invalid_grant` re-reads the entry before it renews or wipes, so a stale copy never
///   wipes a good entry. A failing store makes the broker renew on its own, with one warning
///   per episode. The state machine decides each step (`TokenBroker+Coordination.swift`).
///
/// Reading a still-valid token takes a lock, not an actor hop, so the steady state costs
/// little; only a renewal goes through the actor — with a shared store too.
actor TokenBroker {
    /// The level this broker serves.
    nonisolated let level: AuthorizationLevel
    /// The token endpoint the strategy uses.
    nonisolated let endpoint: TokenEndpoint
    /// Where the level's token is kept.
    nonisolated let store: any TokenStore
    /// The key of the level's token in the store.
    nonisolated let storeKey: TokenStoreKey
    /// Renewal timing and limits.
    nonisolated let configuration: Configuration
    /// ``store``, when processes share it: renewals are then coordinated through it.
    nonisolated let sharedStore: (any SharedTokenStore)?

    private let strategy: any GrantStrategy
    /// The user's access token, for a level derived from the user (``GrantContext/userAccessToken()``).
    let userTokenSource: (@Sendable () async throws -> String)?
    let logger: Logger
    let now: @Sendable () -> Date
    var machine: StateMachine
    private var futures: [StateMachine.OperationID: SharedTokenFuture] = [:]
    private var lastWrite: Task<Void, Never>?
    private nonisolated let fastPath = LockedBox<(token: BrokeredToken, renewAt: Date)?>(nil)
    /// Operations (load, renewal, grant) whose task has not ended.
    private nonisolated let operationsInFlight = Atomic<Int>(0)
    /// Renewal metrics and spans, when the token endpoint's session has any.
    nonisolated let instruments: TokenInstruments?

    /// Whether an operation (a load, a renewal, a grant) is in flight, read without the
    /// actor: the user registry never evicts a user whose broker is busy, since a broker made
    /// in its place would read the store before the new token is written and renew again.
    nonisolated var hasOperationInFlight: Bool { operationsInFlight.load(ordering: .acquiring) > 0 }

    /// Creates a broker.
    ///
    /// - Parameters:
    ///   - level: The level it serves.
    ///   - endpoint: The token endpoint (on a session without the auth middleware).
    ///   - strategy: How to obtain a new token when there is none or it must be renewed:
    ///     ``ClientCredentialsGrant`` for a device, ``RefreshTokenGrant`` for a user.
    ///   - store: Where the token is kept; in memory by default.
    ///   - configuration: Leeway and refresh limit.
    ///   - logger: Where background work logs (never a token); nothing by default.
    ///   - user: The service's key for the user the level belongs to, `nil` for the single
    ///     user or no user; part of the store key.
    init(
        level: AuthorizationLevel,
        endpoint: TokenEndpoint,
        strategy: any GrantStrategy,
        store: any TokenStore = InMemoryTokenStore(),
        configuration: Configuration = Configuration(),
        logger: Logger? = nil,
        user: String? = nil,
        userTokenSource: (@Sendable () async throws -> String)? = nil
    ) {
        self.init(
            level: level,
            endpoint: endpoint,
            strategy: strategy,
            store: store,
            configuration: configuration,
            logger: logger,
            user: user,
            userTokenSource: userTokenSource,
            now: { Date() }
        )
    }

    /// Creates a broker with a clock (the test seam).
    init(
        level: AuthorizationLevel,
        endpoint: TokenEndpoint,
        strategy: any GrantStrategy,
        store: any TokenStore,
        configuration: Configuration,
        logger: Logger?,
        user: String? = nil,
        userTokenSource: (@Sendable () async throws -> String)? = nil,
        now: @escaping @Sendable () -> Date
    ) {
        self.userTokenSource = userTokenSource
        self.level = level
        self.endpoint = endpoint
        self.strategy = strategy
        self.store = store
        self.sharedStore = store as? any SharedTokenStore
        self.storeKey = TokenStoreKey(clientID: endpoint.client.clientID, level: level, user: user)
        self.configuration = configuration
        self.logger = logger ?? Session.silentLogger
        self.now = now
        self.instruments = TokenInstruments(session: endpoint.session, level: level)
        self.machine = StateMachine(
            level: level,
            leeway: configuration.leeway,
            refreshLimit: configuration.refreshLimit,
            backoff: configuration.backoff,
            sharesStore: sharedStore != nil,
            leaseDuration: configuration.leaseDuration
        )
    }

    // MARK: Public API

    /// A valid token: the current one, or a new one from the one renewal in flight.
    ///
    /// - Returns: The token and its version.
    /// - Throws: ``CourierError`` (``CourierError/Kind/userNotAuthenticated`` when there is no
    ///   user, ``CourierError/Kind/excessiveRefresh`` past the refresh limit, …), or
    ///   `CancellationError` when the calling task is cancelled while waiting.
    nonisolated func token() async throws -> BrokeredToken {
        if let token = cachedToken() { return token }
        guard let instruments else { return try await slowToken() }
        let start = ContinuousClock.now
        defer { instruments.recordWait(since: start) }
        return try await slowToken()
    }

    /// Reports that a resource server rejected `rejected` (HTTP 401) and returns the token to
    /// retry with.
    ///
    /// When `rejected` is still current, it is renewed (once, however many callers report
    /// it); otherwise the newer token is returned at once.
    ///
    /// - Parameter rejected: The token that was sent, as ``token()`` returned it.
    /// - Returns: The token to retry with.
    /// - Throws: As ``token()``.
    func tokenRejected(_ rejected: BrokeredToken) async throws -> BrokeredToken {
        let action = machine.tokenRejected(version: rejected.version, now: now())
        syncFastPath()
        return try await perform(action)
    }

    /// A valid token for code not behind Courier: as ``token()``, but when `rejected` (a token
    /// another backend refused) is still the current one, it is renewed first, once however
    /// many callers report it.
    ///
    /// - Parameter rejected: A token the caller's backend rejected, or `nil`.
    /// - Returns: The token.
    /// - Throws: As ``token()``.
    nonisolated func validToken(replacingRejected rejected: OAuth2Token?) async throws -> OAuth2Token {
        let current = try await token()
        guard let rejected, rejected.accessToken == current.token.accessToken else { return current.token }
        return try await tokenRejected(current).token
    }

    /// Runs a grant the app chose (a sign-in) and makes its token the level's token.
    ///
    /// Waits for an operation in flight to finish first. Callers that need a token while the
    /// grant runs wait for it. A failed grant leaves the previous token as it was.
    ///
    /// - Parameter grant: The grant, such as ``PasswordGrant`` or ``AuthorizationCodeGrant``.
    /// - Returns: The new token.
    /// - Throws: ``CourierError`` from the grant, or `CancellationError`.
    @discardableResult
    func authorize(with grant: any GrantStrategy) async throws -> BrokeredToken {
        while true {
            try Task.checkCancellation()
            switch machine.grantRequested() {
            case .start(let operation):
                syncFastPath()
                let (future, task) = launchTask(operation, strategy: grant)
                // A sign-in belongs to its caller: cancelling the caller cancels the grant
                // (the browser step, say), unlike a renewal that others may be waiting for.
                return try await withTaskCancellationHandler {
                    try await future.value()
                } onCancel: {
                    task.cancel()
                }
            case .waitFor(let id):
                // Join the operation in flight (its outcome, even a cancellation, is not this
                // grant's), then ask again; this caller's own cancellation ends the loop above.
                guard let future = futures[id] else {
                    throw CourierError(
                        kind: .tokenRefreshFailed,
                        message: "the \(level) operation in flight has no result to wait for",
                        level: level
                    )
                }
                _ = try? await future.value()
            }
        }
    }

    /// The current token without renewing it, reading the store if needed; `nil` when there
    /// is none.
    ///
    /// - Returns: The token, possibly expired.
    /// - Throws: ``CourierError`` when the store must be read and cannot be.
    func currentToken() async throws -> OAuth2Token? {
        if machine.isLoaded { return machine.token }
        let stored: OAuth2Token?
        do {
            stored = try await store.token(for: storeKey)
        } catch {
            throw CourierError.tokenStore(error, level: level, "the \(level) token could not be read from the store")
        }
        // The store was read outside the machine: prefer whatever the machine learnt meanwhile.
        return machine.isLoaded ? machine.token : stored
    }

    /// Forgets the level's token, in memory and in the store (logout).
    ///
    /// Callers waiting for a renewal get ``CourierError/Kind/userNotAuthenticated``; a renewal
    /// that finishes afterwards is dropped, and the token it obtained is revoked.
    ///
    /// - Returns: The token that was current, so the caller can revoke it.
    /// - Throws: ``CourierError`` when the store cannot be written; the token is forgotten
    ///   in memory regardless.
    @discardableResult
    func wipe() async throws -> OAuth2Token? {
        let previous = machine.token
        let abandoned = machine.wiped()
        syncFastPath()
        if let abandoned, let future = futures.removeValue(forKey: abandoned) {
            future.complete(
                .failure(
                    CourierError(kind: .userNotAuthenticated, message: "the \(level) tokens were wiped", level: level)
                )
            )
        }
        if let error = await persist(nil) {
            throw CourierError.tokenStore(error, level: level, "the \(level) token could not be removed from the store")
        }
        return previous
    }

    /// Counts of renewals, grants and store reads so far.
    var statistics: Statistics { machine.statistics }

    // MARK: Operations

    private nonisolated func cachedToken() -> BrokeredToken? {
        let current = now()
        return fastPath.withLock { entry in
            guard let entry, current < entry.renewAt else { return nil }
            return entry.token
        }
    }

    private func slowToken() async throws -> BrokeredToken {
        let action = machine.tokenRequested(now: now())
        syncFastPath()
        return try await perform(action)
    }

    private func perform(_ action: StateMachine.TokenAction) async throws -> BrokeredToken {
        switch action {
        case .use(let token):
            return token
        case .fail(let error):
            throw error
        case .join(let id):
            guard let future = futures[id] else {
                // Unreachable: every operation in flight has a future. Ask again rather than trap.
                return try await slowToken()
            }
            return try await future.value()
        case .start(let operation, _):
            return try await launchTask(operation, strategy: strategy).future.value()
        }
    }

    /// Starts an operation in a task of its own, so that no caller's cancellation stops it.
    private func launchTask(
        _ operation: StateMachine.Operation,
        strategy: any GrantStrategy
    )
        -> (future: SharedTokenFuture, task: Task<Void, Never>)
    {
        let future = SharedTokenFuture()
        futures[operation.id] = future
        operationsInFlight.add(1, ordering: .relaxed)
        let task = Task {
            let result = await self.run(operation.id, strategy: strategy)
            // Done before the waiters resume: the result is in the store by now.
            self.operationsInFlight.subtract(1, ordering: .releasing)
            self.finish(operation.id, future: future, result: result)
        }
        return (future, task)
    }

    private func finish(
        _ id: StateMachine.OperationID,
        future: SharedTokenFuture,
        result: Result<BrokeredToken, any Error>
    ) {
        if futures[id] === future { futures[id] = nil }
        // An empty table keeps its storage: let it go, an idle broker of many users costs less.
        if futures.isEmpty { futures = [:] }
        future.complete(result)
    }

    /// Revokes (RFC 7009) a token that an operation obtained after logout abandoned it:
    /// nobody will use it, and it must not stay valid at the server. Without a revocation
    /// endpoint, or when the server refuses, the failure is logged (never the token).
    func revokeAbandoned(_ token: OAuth2Token) async {
        guard endpoint.server.revocationEndpoint != nil else {
            logger.warning("a \(level) token arrived after logout; the server has no revocation endpoint")
            return
        }
        var revocations: [(token: String, hint: TokenTypeHint)] = [(token.accessToken, .accessToken)]
        if let refresh = token.refreshToken { revocations.insert((refresh, .refreshToken), at: 0) }
        for (value, hint) in revocations {  // each on its own: one failure does not skip the other
            do {
                try await endpoint.revoke(value, hint: hint)
                logger.debug("a \(level) \(hint.rawValue) that arrived after logout was revoked")
            } catch {
                logger.warning("a \(level) \(hint.rawValue) that arrived after logout could not be revoked: \(error)")
            }
        }
    }

    /// Writes the store in the order the machine decided: each write waits for the previous
    /// one, so a logout's removal cannot be overtaken by an earlier renewal's write.
    func persist(_ token: OAuth2Token?) async -> (any Error)? {
        let previous = lastWrite
        let store = self.store
        let key = storeKey
        let outcome = LockedBox<(any Error)?>(nil)
        let write = Task {
            await previous?.value
            do {
                try await store.setToken(token, for: key)
            } catch {
                outcome.withLock { $0 = error }
            }
        }
        lastWrite = write
        await write.value
        return outcome.withLock { $0 }
    }

    func syncFastPath() {
        let entry = machine.fastPathToken
        fastPath.withLock { $0 = entry }
    }

    func abandonedError() -> CourierError {
        CourierError(
            kind: .userNotAuthenticated,
            message: "the \(level) tokens were wiped during the renewal",
            level: level
        )
    }
}
