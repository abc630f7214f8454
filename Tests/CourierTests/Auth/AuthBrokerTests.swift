import Foundation
import Testing

@testable import Courier

/// The broker actor with a scripted grant: single flight, cancellation, errors, versions.
@Suite(.timeLimit(.minutes(1)))
struct AuthBrokerTests {
    @Test func tenThousandConcurrentCallersShareOneRefresh() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock, lifetime: 600)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        let first = try await broker.token()
        #expect(grant.calls == 1)
        clock.advance(601)  // expired for everyone at once
        grant.hold()
        let tokens = try await withThrowingTaskGroup(of: BrokeredToken.self) { group in
            for _ in 0..<10_000 { group.addTask { try await broker.token() } }
            // Let the callers pile up behind the one renewal before it may finish.
            while !grant.isWaitingAtGate { await Task.yield() }
            try await Task.sleep(for: .milliseconds(50))
            grant.release()
            var tokens: [BrokeredToken] = []
            for try await token in group { tokens.append(token) }
            return tokens
        }
        #expect(grant.calls == 2)
        #expect(tokens.count == 10_000)
        #expect(Set(tokens.map(\.token.accessToken)) == ["t2"])
        #expect(Set(tokens.map(\.version)).count == 1)
        #expect(tokens[0].version > first.version)
        #expect(await broker.statistics.renewals == 2)  // the first token, then the one renewal
    }

    @Test func aCancelledWaiterStopsWaitingWithoutCancellingTheRefresh() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock)
        _ = try await broker.authorize(with: grant)
        clock.advance(7200)
        grant.hold()
        let cancelled = Task { try await broker.token() }
        while !grant.isWaitingAtGate { await Task.yield() }
        let patient = Task { try await broker.token() }
        cancelled.cancel()
        await #expect(throws: CancellationError.self) { try await cancelled.value }
        #expect(grant.isWaitingAtGate)  // the renewal goes on
        grant.release()
        let token = try await patient.value
        #expect(token.token.accessToken == "t2")
        #expect(grant.calls == 2)
        #expect(grant.cancellationsObserved == 0)
    }

    @Test func aRefreshErrorReachesEveryWaiter() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        _ = try await broker.token()
        clock.advance(7200)
        grant.hold()
        grant.failNext(
            with: CourierError(kind: .tokenRefreshFailed, message: "503 from the token endpoint", statusCode: 503)
        )
        let results = await withTaskGroup(of: Result<BrokeredToken, any Error>.self) { group in
            for _ in 0..<200 { group.addTask { await Result(awaiting: { try await broker.token() }) } }
            while !grant.isWaitingAtGate { await Task.yield() }
            try? await Task.sleep(for: .milliseconds(20))
            grant.release()
            var results: [Result<BrokeredToken, any Error>] = []
            for await result in group { results.append(result) }
            return results
        }
        #expect(grant.calls == 2)
        for result in results {
            #expect(throws: CourierError(.tokenRefreshFailed)) { try result.get() }
        }
        // A caller during the backoff gets the failure at once; after it, the next one tries again.
        await #expect(throws: CourierError(.tokenRefreshFailed)) { try await broker.token() }
        #expect(grant.calls == 2)
        clock.advance(1)
        #expect(try await broker.token().token.accessToken == "t3")
    }

    @Test func aBurstOf401sForOneTokenRenewsOnce() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        let rejected = try await broker.token()
        let renewed = try await withThrowingTaskGroup(of: BrokeredToken.self) { group in
            for _ in 0..<500 { group.addTask { try await broker.tokenRejected(rejected) } }
            var tokens: [BrokeredToken] = []
            for try await token in group { tokens.append(token) }
            return tokens
        }
        #expect(grant.calls == 2)
        #expect(Set(renewed.map(\.token.accessToken)) == ["t2"])
        // A late 401 for the old token changes nothing.
        let late = try await broker.tokenRejected(rejected)
        #expect(late.token.accessToken == "t2")
        #expect(grant.calls == 2)
        #expect(grant.reasons == [.noToken, .rejected])
    }

    @Test func invalidGrantWipesTheStoreAndAnswersUserNotAuthenticated() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let store = InMemoryTokenStore()
        let broker = AuthFixtures.broker(grant: grant, clock: clock, store: store)
        let signedIn = try await broker.authorize(with: grant)
        #expect(try await store.token(for: broker.storeKey)?.accessToken == "t1")
        grant.failNext(
            with: CourierError(
                kind: .grantRejected,
                message: "",
                oauthError: OAuth2Error(code: .invalidGrant),
                statusCode: 400
            )
        )
        await #expect(throws: CourierError(.userNotAuthenticated)) { try await broker.tokenRejected(signedIn) }
        #expect(try await store.token(for: broker.storeKey) == nil)
        #expect(try await broker.currentToken() == nil)
    }

    @Test func theRefreshLoopGuardGivesExcessiveRefresh() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(
            grant: grant,
            clock: clock,
            level: .device,
            configuration: .init(refreshLimit: .init(maximumRefreshes: 3, window: .seconds(60)))
        )
        var token = try await broker.token()
        for _ in 0..<3 {
            token = try await broker.tokenRejected(token)  // a server that rejects every token
        }
        await #expect(throws: CourierError(.excessiveRefresh)) { try await broker.tokenRejected(token) }
        #expect(grant.calls == 4)
        // The level stays closed for the cooldown only, then renews again.
        clock.advance(RefreshLimit.cooldown.inSeconds - 0.5)
        await #expect(throws: CourierError(.excessiveRefresh)) { try await broker.token() }
        #expect(grant.calls == 4)
        clock.advance(0.5)
        #expect(try await broker.tokenRejected(token).token.accessToken == "t5")
    }

    @Test func aStoredTokenIsUsedAndRotationIsPersisted() async throws {
        let clock = TestClock()
        let store = InMemoryTokenStore()
        let key = TokenStoreKey(clientID: AuthFixtures.client.clientID, level: .user)
        try await store.setToken(
            OAuth2Token(
                accessToken: "stored",
                issuedAt: clock.now,
                expiresAt: clock.now.addingTimeInterval(100),
                refreshToken: "r0"
            ),
            for: key
        )
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, store: store)
        #expect(try await broker.token().token.accessToken == "stored")
        #expect(grant.calls == 0)
        clock.advance(200)
        #expect(try await broker.token().token.accessToken == "t1")
        #expect(try await store.token(for: key)?.refreshToken == "r1")
        #expect(await broker.statistics.loads == 1)
    }

    @Test func wipingDuringARenewalFailsTheWaitersAndDropsTheResult() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let store = InMemoryTokenStore()
        let broker = AuthFixtures.broker(grant: grant, clock: clock, store: store)
        let first = try await broker.authorize(with: grant)
        grant.hold()
        let waiter = Task { try await broker.tokenRejected(first) }
        while !grant.isWaitingAtGate { await Task.yield() }
        let wiped = try await broker.wipe()
        #expect(wiped?.accessToken == "t1")
        await #expect(throws: CourierError(.userNotAuthenticated)) { try await waiter.value }
        grant.release()
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await broker.currentToken() == nil)
        #expect(try await store.token(for: broker.storeKey) == nil)
    }

    @Test func withoutARefreshTokenTheUserMustSignInAgain() async throws {
        let clock = TestClock()
        let broker = TokenBroker(
            level: .user,
            endpoint: AuthFixtures.endpoint().0,
            strategy: RefreshTokenGrant(),
            store: InMemoryTokenStore(),
            configuration: .init(),
            logger: nil,
            now: clock.function
        )
        let error = await #expect(throws: CourierError(.userNotAuthenticated)) { try await broker.token() }
        #expect(error?.level == .user)
    }

    @Test func theFastPathAgreesWithTheActor() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock, lifetime: 100)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        let first = try await broker.token()
        for _ in 0..<1000 { #expect(try await broker.token() == first) }
        clock.advance(71)  // past the renewal date: expiry (100 s) minus the 30 s leeway
        #expect(try await broker.token().token.accessToken == "t2")
        #expect(grant.calls == 2)
    }
}
