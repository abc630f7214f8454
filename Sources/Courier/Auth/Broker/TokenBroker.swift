import Foundation
import Logging
import Synchronization

/// A token with the version the broker gave it.
///
/// Report a rejection with the same value (``TokenBroker/tokenRejected(_:)``): the version
/// lets the broker tell a rejection of the current token from a late one for a token it has
/// already replaced.
struct BrokeredToken: Sendable, Hashable, CustomStringConvertible {
    /// The token.
    let token: OAuth2Token
    /// The broker's version of it; each new token gets a higher one.
    let version: UInt64
    /// The `Authorization` value, made once per token rather than once per request.
    let authorizationValue: String

    /// Creates a brokered token.
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - version: Its version.
    init(token: OAuth2Token, version: UInt64) {
        self.token = token
        self.version = version
        self.authorizationValue = token.authorizationValue
    }

    /// The version and the token's description (never the token itself).
    var description: String { "v\(version) \(token)" }
}

/// The refresh-loop guard: how many renewals of a freshly rejected token a broker allows
/// within a time window before it refuses with ``CourierError/Kind/excessiveRefresh``.
///
/// A resource server that rejects every token it is given would make a client renew forever.
/// Only such renewals count: a token rejected within ``freshness`` of being obtained. Renewals
/// for expiry or the leeway, of a stored token, or of a token that served for a while never
/// count, however short-lived the tokens are.
///
/// When the guard trips, the level answers ``CourierError/Kind/excessiveRefresh`` for
/// ``cooldown``, then renews again, counting afresh.
struct RefreshLimit: Sendable, Hashable {
    /// The most successful renewals of a freshly rejected token within ``window``.
    var maximumRefreshes: Int
    /// The sliding window.
    var window: Duration

    /// How long after a broker obtained a token a rejection of it counts toward the guard
    /// (10 seconds): long enough for a request and its 401 on a slow network, short enough
    /// that a token revoked after it served a while is not taken for a loop.
    static let freshness: Duration = .seconds(10)

    /// How long a tripped guard refuses renewals after a rejection (5 seconds): a level that
    /// loops is stopped, never locked out for long.
    static let cooldown: Duration = .seconds(5)

    /// Creates a limit.
    ///
    /// - Parameters:
    ///   - maximumRefreshes: The most renewals within the window (5 by default).
    ///   - window: The window (30 seconds by default).
    init(maximumRefreshes: Int = 5, window: Duration = .seconds(30)) {
        self.maximumRefreshes = max(1, maximumRefreshes)
        self.window = window
    }
}

/// How long a broker waits after failed renewals before it tries again.
///
/// Exponential with jitter: after the n-th failure in a row the next renewal waits between half
/// and all of `base × 2ⁿ⁻¹`, capped at ``maximum`` — 125–250 ms after the first failure, then
/// 250–500 ms, 0.5–1 s, …, 15–30 s. A success resets it. A 429 or 503 with `Retry-After`
/// makes the wait at least that long, capped at ``maximumRetryAfter``.
struct RenewalBackoff: Sendable, Hashable {
    /// The step after the first failure (250 ms).
    var base: Duration
    /// The longest step (30 seconds).
    var maximum: Duration
    /// The longest `Retry-After` honoured (60 seconds); a server asking for more gets this.
    var maximumRetryAfter: Duration

    /// Creates a backoff.
    ///
    /// - Parameters:
    ///   - base: The step after the first failure.
    ///   - maximum: The longest step.
    ///   - maximumRetryAfter: The longest `Retry-After` honoured.
    init(
        base: Duration = .milliseconds(250),
        maximum: Duration = .seconds(30),
        maximumRetryAfter: Duration = .seconds(60)
    ) {
        self.base = base
        self.maximum = maximum
        self.maximumRetryAfter = maximumRetryAfter
    }

    /// The full step after `failures` failures in a row (no jitter): `base × 2ⁿ⁻¹`, capped.
    func step(afterFailures failures: Int) -> Duration {
        let doublings = min(max(failures, 1) - 1, 40)
        let seconds = base.authTimeInterval * Double(1 << doublings)
        return .seconds(min(seconds, maximum.authTimeInterval))
    }

    /// The wait after `failures` failures in a row.
    ///
    /// - Parameters:
    ///   - failures: Failed renewals in a row, at least 1.
    ///   - jitter: A random number in `0...1`: 0 waits half the step, 1 the whole step.
    /// - Returns: The wait.
    func delay(afterFailures failures: Int, jitter: Double) -> Duration {
        let fraction = 0.5 + 0.5 * min(max(jitter, 0), 1)
        return .seconds(step(afterFailures: failures).authTimeInterval * fraction)
    }
}

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
///   per episode. See `TokenBroker+SharedStore.swift`.
///
/// Reading a still-valid token takes a lock, not an actor hop, so the steady state costs
/// little; only a renewal goes through the actor — with a shared store too.
actor TokenBroker {
    /// Renewal timing and limits.
    struct Configuration: Sendable, Hashable {
        /// How long before expiry a token is renewed (30 seconds by default). It is capped at
        /// half the token's lifetime, so short-lived tokens are not renewed on every use.
        var leeway: Duration
        /// The refresh-loop guard.
        var refreshLimit: RefreshLimit
        /// How long to wait after failed renewals.
        var backoff: RenewalBackoff
        /// With a ``SharedTokenStore``: how long a renewal's lease holds (10 seconds by
        /// default, longer than a token request takes). A holder that dies blocks the others
        /// at most this long.
        var leaseDuration: Duration
        /// With a ``SharedTokenStore``: how long a renewal waits for another process's lease
        /// before it renews on its own — one and a half lease durations, so that a lease whose
        /// holder died times out, and a waiter takes it, within the wait.
        var leaseWait: Duration { leaseDuration + leaseDuration / 2 }

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - leeway: How long before expiry to renew.
        ///   - refreshLimit: The refresh-loop guard.
        ///   - backoff: How long to wait after failed renewals.
        ///   - leaseDuration: How long a renewal's lease on a shared store holds.
        init(
            leeway: Duration = .seconds(30),
            refreshLimit: RefreshLimit = RefreshLimit(),
            backoff: RenewalBackoff = RenewalBackoff(),
            leaseDuration: Duration = .seconds(10)
        ) {
            self.leeway = leeway
            self.refreshLimit = refreshLimit
            self.backoff = backoff
            self.leaseDuration = leaseDuration
        }
    }

    /// Counts for tests, the demo and metrics.
    struct Statistics: Sendable, Hashable {
        /// Renewals started (each one strategy call).
        var renewals: Int = 0
        /// Explicit grants started (sign-ins).
        var grants: Int = 0
        /// Store reads.
        var loads: Int = 0
        /// Renewals that failed (each one strategy call).
        var failedRenewals: Int = 0
        /// Failed renewals whose callers got the still-valid token instead (serve stale).
        var staleServed: Int = 0
        /// Tokens taken from a shared store that another process wrote, instead of renewing.
        var adoptions: Int = 0
        /// Renewals that waited for another process's lease.
        var leaseWaits: Int = 0
        /// Compare-and-swap writes to a shared store that lost to another process's write.
        var conflicts: Int = 0
        /// Renewals done without the shared store's coordination (it failed, or its lease
        /// was not released within the wait).
        var localRenewals: Int = 0
    }

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
    private let userTokenSource: (@Sendable () async throws -> String)?
    let logger: Logger
    let now: @Sendable () -> Date
    private var machine: StateMachine
    private var futures: [StateMachine.OperationID: SharedTokenFuture] = [:]
    private var lastWrite: Task<Void, Never>?
    var counters = Statistics()
    /// With a shared store: the version of the entry the current token came from or went to
    /// (0 when unknown).
    var sharedVersion: UInt64 = 0
    /// With a shared store: whether it is failing (or its lease is stuck) at the moment; the
    /// warning is logged once per such episode.
    var storeIsDegraded = false
    private nonisolated let fastPath = LockedBox<(token: BrokeredToken, renewAt: Date)?>(nil)
    /// Operations (load, renewal, grant) whose task has not ended.
    private nonisolated let operationsInFlight = Atomic<Int>(0)
    /// Renewal metrics and spans, when the token endpoint's session has any.
    private nonisolated let instruments: TokenInstruments?

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
            backoff: configuration.backoff
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
            if let operation = machine.grantRequested() {
                syncFastPath()
                counters.grants += 1
                let (future, task) = launchTask(operation, current: machine.token, strategy: grant)
                // A sign-in belongs to its caller: cancelling the caller cancels the grant
                // (the browser step, say), unlike a renewal that others may be waiting for.
                return try await withTaskCancellationHandler {
                    try await future.value()
                } onCancel: {
                    task.cancel()
                }
            }
            // Another operation is in flight: let it finish, then check the state again.
            if let id = machine.operation?.id, let future = futures[id] {
                _ = try? await future.value()
            } else {
                await Task.yield()
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
    var statistics: Statistics { counters }

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
        case .start(let operation, let current):
            return try await launch(operation, current: current, strategy: strategy).value()
        }
    }

    /// Starts an operation in a task of its own, so that no caller's cancellation stops it.
    private func launch(
        _ operation: StateMachine.Operation,
        current: OAuth2Token?,
        strategy: any GrantStrategy
    )
        -> SharedTokenFuture
    {
        launchTask(operation, current: current, strategy: strategy).future
    }

    private func launchTask(
        _ operation: StateMachine.Operation,
        current: OAuth2Token?,
        strategy: any GrantStrategy
    )
        -> (future: SharedTokenFuture, task: Task<Void, Never>)
    {
        let future = SharedTokenFuture()
        futures[operation.id] = future
        operationsInFlight.add(1, ordering: .relaxed)
        let task = Task {
            let result = await self.run(operation, current: current, strategy: strategy)
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

    /// Runs one operation to its end. Every `await` is followed by a fresh look at the
    /// state machine, which may have moved on (logout) meanwhile.
    ///
    /// With a ``SharedTokenStore``, a renewal is coordinated with the other processes
    /// (``coordinateRenewal(current:reason:)``): it may adopt a token another process wrote
    /// instead of asking the server, and its result is written with compare-and-swap.
    private func run(
        _ operation: StateMachine.Operation,
        current: OAuth2Token?,
        strategy: any GrantStrategy
    ) async
        -> Result<BrokeredToken, any Error>
    {
        var current = current
        var reason: GrantContext.Reason
        switch operation.kind {
        case .grant:
            reason = .requested
        case .renew(let why):
            reason = why
        case .load:
            counters.loads += 1
            let loaded = await load()
            let action = machine.loadCompleted(operation.id, result: loaded.result, now: now())
            syncFastPath()
            switch action {
            case .resolve(let token):
                sharedVersion = loaded.version
                return .success(token)
            case .fail(let error):
                return .failure(error)
            case .discard:
                return .failure(abandonedError())
            case .renew(let stored, let why):
                sharedVersion = loaded.version
                current = stored
                reason = why
            }
        }

        var renewal = SharedRenewal()
        let obtained: Result<OAuth2Token, any Error>
        if reason != .requested, sharedStore != nil {
            renewal = await coordinateRenewal(current: current, reason: reason)
            if let stored = renewal.renewWith { current = stored }
        }
        if let adopted = renewal.adopted {
            obtained = .success(adopted)
        } else {
            if reason != .requested {
                counters.renewals += 1
                instruments?.recordRenewal()
            }
            let context = GrantContext(
                level: level,
                current: current,
                reason: reason,
                endpoint: endpoint,
                logger: logger,
                userTokenSource: userTokenSource
            )
            do {
                let token =
                    if let instruments {
                        try await instruments.span(reason: reason) { try await strategy.obtainToken(context) }
                    } else {
                        try await strategy.obtainToken(context)
                    }
                obtained = await writeShared(
                    .success(token),
                    renewal: &renewal,
                    replacing: current,
                    isCurrent: machine.operation?.id == operation.id
                )
            } catch {
                obtained = await writeShared(
                    .failure(error),
                    renewal: &renewal,
                    replacing: current,
                    isCurrent: machine.operation?.id == operation.id
                )
            }
        }
        await releaseLease(of: &renewal)

        let action = machine.operationCompleted(
            operation.id,
            result: obtained,
            now: now(),
            jitter: Double.random(in: 0...1)
        )
        syncFastPath()
        switch action {
        case .publish(let token):
            if renewal.adopted != nil {
                logger.debug(
                    "\(level) token taken from the shared store (\(reason.rawValue)): version \(token.version)",
                    metadata: [TokenBroker.eventMetadataKey: "adopted"]
                )
            } else {
                logger.debug(
                    "\(level) token renewed (\(reason.rawValue)): version \(token.version)",
                    metadata: [TokenBroker.eventMetadataKey: "renewed"]
                )
            }
            if renewal.stored {
                if let version = renewal.writtenVersion { sharedVersion = version }
            } else if let error = await persistPublished(token.token) {
                // The server has already rotated the refresh token: keep the new one in memory
                // rather than lose the session; the store catches up on the next write.
                logger.error("the \(level) token could not be stored: \(error)")
            }
            return .success(token)
        case .serveStale(let token, let error, let retryIn):
            counters.failedRenewals += 1
            instruments?.recordFailure()
            counters.staleServed += 1
            let wait = StateMachine.describe(retryIn.authTimeInterval)
            logger.warning(
                "the \(level) token could not be renewed (\(error.kind)); it stays in use until it expires, next attempt in \(wait)"
            )
            return .success(token)
        case .fail(let error, let wipe):
            if reason != .requested {
                counters.failedRenewals += 1
                instruments?.recordFailure()
            }
            logger.debug("\(level) token renewal failed: \(error.kind)")
            if wipe {
                if sharedStore != nil {
                    await wipeShared(renewal: renewal)
                } else if let storeError = await persist(nil) {
                    logger.error("the \(level) token could not be removed from the store: \(storeError)")
                }
            }
            if case .failure(let cause) = obtained, cause is CancellationError { return .failure(cause) }
            return .failure(error)
        case .discard:
            // A token adopted from the shared store is the other processes' too: never revoke it.
            if case .success(let orphan) = obtained, renewal.adopted == nil { await revokeAbandoned(orphan) }
            return .failure(abandonedError())
        }
    }

    /// Reads the level's token from the store, with its shared version when the store is
    /// shared. A shared store that fails is not fatal: the level starts without a token and
    /// renews on its own (with a warning), as the other processes would.
    private func load() async -> (result: Result<OAuth2Token?, any Error>, version: UInt64) {
        guard let sharedStore else {
            do {
                return (.success(try await store.token(for: storeKey)), 0)
            } catch {
                return (.failure(error), 0)
            }
        }
        do {
            let entry = try await sharedStore.entry(for: storeKey)
            sharedStoreRecovered()
            return (.success(entry.token), entry.version)
        } catch let error as CourierError where Self.isDamage(error) {
            // A damaged store is an error, never papered over with a new token.
            return (.failure(error), 0)
        } catch {
            sharedStoreDegraded(because: "the shared token store could not be read (\(error))")
            return (.success(nil), 0)
        }
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

    /// Stores a token the machine published: with a shared store, as the entry's next
    /// version (a sign-in replaces whatever the entry held); otherwise a plain write.
    private func persistPublished(_ token: OAuth2Token) async -> (any Error)? {
        guard let sharedStore else { return await persist(token) }
        do {
            for _ in 0..<3 {
                let entry = try await sharedStore.entry(for: storeKey)
                if let written = try await sharedStore.setToken(token, for: storeKey, ifVersion: entry.version) {
                    sharedVersion = written.version
                    return nil
                }
            }
            return CourierError(
                kind: .tokenStoreFailed,
                message: "the shared \(level) entry kept changing while the token was written",
                level: level
            )
        } catch {
            return error
        }
    }

    /// Revokes (RFC 7009) a token that an operation obtained after logout abandoned it:
    /// nobody will use it, and it must not stay valid at the server. Without a revocation
    /// endpoint, or when the server refuses, the failure is logged (never the token).
    private func revokeAbandoned(_ token: OAuth2Token) async {
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

    private func syncFastPath() {
        let entry = machine.fastPathToken
        fastPath.withLock { $0 = entry }
    }

    private func abandonedError() -> CourierError {
        CourierError(
            kind: .userNotAuthenticated,
            message: "the \(level) tokens were wiped during the renewal",
            level: level
        )
    }
}
