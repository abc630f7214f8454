import Foundation
import Logging
import Testing

@testable import Courier

/// Brokers that share one ``SharedTokenStore`` behave like the processes of a fleet: each plays
/// a process, the in-memory store plays the shared database. One scripted grant serves them
/// all, so its call count is what the authorization server would see.
@Suite(.timeLimit(.minutes(1)))
struct AuthSharedStoreTests {
    let clock = TestClock()

    func broker(
        _ grant: ScriptedGrant,
        store: any TokenStore,
        level: AuthorizationLevel = .user,
        leaseDuration: Duration = .seconds(10),
        logger: Logger? = nil
    ) -> TokenBroker {
        TokenBroker(
            level: level,
            endpoint: AuthFixtures.endpoint().0,
            strategy: grant,
            store: store,
            configuration: .init(
                leeway: .seconds(30),
                refreshLimit: .init(maximumRefreshes: 1000, window: .seconds(30)),
                leaseDuration: leaseDuration
            ),
            logger: logger,
            now: clock.function
        )
    }

    var key: TokenStoreKey { TokenStoreKey(clientID: AuthFixtures.client.clientID, level: .user) }

    func token(_ name: String) -> OAuth2Token {
        OAuth2Token(
            accessToken: name,
            issuedAt: clock.now,
            expiresAt: clock.now.addingTimeInterval(3600),
            refreshToken: "refresh-" + name,
            scope: [.read]
        )
    }

    static let invalidGrant = CourierError(
        kind: .grantRejected,
        message: "the refresh token was refused",
        oauthError: OAuth2Error(code: .invalidGrant)
    )

    /// Waits (bounded) until `condition` holds, yielding between looks.
    func eventually(_ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while !(await condition()) {
            try #require(ContinuousClock.now < deadline, "the condition never held")
            try await Task.sleep(for: .milliseconds(5))
        }
    }

    @Test func twoBrokersRenewOnceBetweenThem() async throws {
        let store = InMemoryTokenStore()
        let grant = ScriptedGrant(clock: clock)
        let first = broker(grant, store: store)
        let second = broker(grant, store: store)

        #expect(try await first.token().token.accessToken == "t1")
        #expect(try await second.token().token.accessToken == "t1")  // read from the store
        clock.advance(3600 - 10)
        #expect(try await first.token().token.accessToken == "t2")
        #expect(try await second.token().token.accessToken == "t2")  // adopted
        #expect(grant.calls == 2)
        #expect(await second.statistics.adoptions == 1)
        #expect(await second.statistics.renewals == 0)
        #expect(try await store.entry(for: key).version == 2)
    }

    @Test func aRejectionOfAnOldTokenAdoptsTheNewerSharedOne() async throws {
        let store = InMemoryTokenStore()
        let grant = ScriptedGrant(clock: clock)
        let first = broker(grant, store: store)
        let second = broker(grant, store: store)
        _ = try await first.token()
        let old = try await second.token()

        let renewed = try await first.tokenRejected(try await first.token())
        #expect(renewed.token.accessToken == "t2")
        // The second process gets a 401 for t1: the shared t2 is the answer, not a renewal.
        let retried = try await second.tokenRejected(old)
        #expect(retried.token.accessToken == "t2")
        #expect(grant.calls == 2)
        #expect(await second.statistics.adoptions == 1)
    }

    @Test func aStaleRefreshTokenNeverWipesTheSharedEntry() async throws {
        let store = InMemoryTokenStore()
        let grant = ScriptedGrant(clock: clock)
        let stale = broker(grant, store: store)
        _ = try await stale.token()  // t1, refresh-… r1
        clock.advance(3600 - 10)

        // The stale broker renews with r1; meanwhile another process (whose lease had timed
        // out) rotated the token, so the server refuses r1.
        grant.hold()
        grant.failNext(with: Self.invalidGrant)
        let renewal = Task { try await stale.token() }
        try await eventually { grant.isWaitingAtGate }
        let rotated = token("rotated")
        try await store.setToken(rotated, for: key)
        grant.release()

        #expect(try await renewal.value.token == rotated)
        #expect(try await store.entry(for: key).token == rotated)
        #expect(try await stale.token().token == rotated)
    }

    @Test func aRefusedRefreshTokenThatIsStillTheSharedOneWipesTheEntry() async throws {
        let store = InMemoryTokenStore()
        let grant = ScriptedGrant(clock: clock)
        let only = broker(grant, store: store)
        _ = try await only.token()
        clock.advance(3600 - 10)
        grant.failNext(with: Self.invalidGrant)
        await #expect(throws: CourierError.self) { try await only.token() }
        let entry = try await store.entry(for: key)
        #expect(entry.token == nil)
        #expect(entry.version == 2)
    }

    @Test func aLostCompareAndSwapAdoptsTheWinner() async throws {
        let store = InMemoryTokenStore()
        let grant = ScriptedGrant(clock: clock)
        let loser = broker(grant, store: store)
        _ = try await loser.token()
        clock.advance(3600 - 10)

        grant.hold()
        let renewal = Task { try await loser.token() }
        try await eventually { grant.isWaitingAtGate }
        let winner = token("winner")
        try await store.setToken(winner, for: key)  // written without the lease
        grant.release()

        #expect(try await renewal.value.token == winner)
        #expect(await loser.statistics.conflicts == 1)
        #expect(try await store.entry(for: key).token == winner)
    }

    @Test func aWaiterAdoptsTheTokenTheLeaseHolderWrites() async throws {
        let store = InMemoryTokenStore()
        let grant = ScriptedGrant(clock: clock)
        let waiter = broker(grant, store: store)
        _ = try await waiter.token()
        clock.advance(3600 - 10)

        let lease = try #require(try await store.acquireLease(for: key, duration: .seconds(30)))
        let renewal = Task { try await waiter.token() }
        try await eventually { await waiter.statistics.leaseWaits == 1 }
        let written = token("from-the-holder")
        try await store.setToken(written, for: key)
        try await store.releaseLease(lease)

        #expect(try await renewal.value.token == written)
        #expect(grant.calls == 1)
        #expect(await waiter.statistics.adoptions == 1)
    }

    @Test func aLeaseWhoseHolderVanishedIsTakenWhenItTimesOut() async throws {
        let store = InMemoryTokenStore()
        let grant = ScriptedGrant(clock: clock)
        let capture = CapturingLogHandler()
        let survivor = broker(grant, store: store, leaseDuration: .seconds(5), logger: capture.makeLogger())
        _ = try await survivor.token()
        clock.advance(3600 - 10)

        // A holder that never releases (it died): its lease times out after 200 ms.
        _ = try #require(try await store.acquireLease(for: key, duration: .milliseconds(200)))
        #expect(try await survivor.token().token.accessToken == "t2")
        #expect(grant.calls == 2)
        #expect(await survivor.statistics.localRenewals == 0)
        #expect(!capture.captured.contains { $0.hasPrefix("warning") })
    }

    @Test func aFailingStoreRenewsLocallyAndWarnsOncePerEpisode() async throws {
        let store = FailingSharedStore()
        let grant = ScriptedGrant(clock: clock)
        let capture = CapturingLogHandler()
        let alone = broker(grant, store: store, logger: capture.makeLogger())

        #expect(try await alone.token().token.accessToken == "t1")
        clock.advance(3600 - 10)
        #expect(try await alone.token().token.accessToken == "t2")
        #expect(grant.calls == 2)
        #expect(await alone.statistics.localRenewals == 2)  // both renewals, one warning
        let warnings = capture.captured.filter { $0.hasPrefix("warning") }
        #expect(warnings.count == 1)
        #expect(warnings.first?.contains("without coordinating") == true)
    }

    @Test func aStuckLeaseIsWaitedForBoundedThenTheBrokerRenewsAlone() async throws {
        let store = InMemoryTokenStore()
        let grant = ScriptedGrant(clock: clock)
        let capture = CapturingLogHandler()
        let waiter = broker(grant, store: store, leaseDuration: .milliseconds(200), logger: capture.makeLogger())
        _ = try await waiter.token()
        clock.advance(3600 - 10)

        // Held far longer than the waiter's bound (300 ms).
        let lease = try #require(try await store.acquireLease(for: key, duration: .seconds(60)))
        #expect(try await waiter.token().token.accessToken == "t2")
        #expect(await waiter.statistics.localRenewals == 1)
        #expect(capture.captured.filter { $0.hasPrefix("warning") }.count == 1)
        try await store.releaseLease(lease)
    }
}

/// A shared store whose every call fails, as when the database is down.
final class FailingSharedStore: SharedTokenStore {
    private func failure() -> CourierError {
        CourierError(kind: .tokenStoreIOFailure, message: "the store is down")
    }

    func token(for key: TokenStoreKey) async throws -> OAuth2Token? { throw failure() }
    func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws { throw failure() }
    func removeTokens(clientID: String) async throws { throw failure() }
    func entry(for key: TokenStoreKey) async throws -> TokenStoreEntry { throw failure() }
    func setToken(
        _ token: OAuth2Token?,
        for key: TokenStoreKey,
        ifVersion version: UInt64
    ) async throws -> TokenStoreEntry? {
        throw failure()
    }
    func acquireLease(for key: TokenStoreKey, duration: Duration) async throws -> TokenStoreLease? {
        throw failure()
    }
    func releaseLease(_ lease: TokenStoreLease) async throws { throw failure() }
}
