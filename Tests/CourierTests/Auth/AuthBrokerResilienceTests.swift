import Foundation
import Testing

@testable import Courier

/// The broker actor when its token endpoint fails: backoff, serve-stale, and short-lived
/// tokens, with a scripted grant and a clock the test moves.
@Suite(.timeLimit(.minutes(1)))
struct AuthBrokerResilienceTests {
    static let outage = CourierError(kind: .tokenRefreshFailed, message: "502 from the token endpoint", statusCode: 502)

    @Test func duringTheBackoffCallersFailAtOnceAndNoGrantStarts() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        _ = try await broker.token()
        clock.advance(7200)
        grant.failNext(with: Self.outage)
        await #expect(throws: CourierError(.tokenRefreshFailed)) { try await broker.token() }
        #expect(grant.calls == 2)
        // A crowd arrives while the broker backs off: every caller gets the failure, none waits.
        let results = await withTaskGroup(of: Result<BrokeredToken, any Error>.self) { group in
            for _ in 0..<500 { group.addTask { await Result(awaiting: { try await broker.token() }) } }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(grant.calls == 2)
        for result in results {
            let error = #expect(throws: CourierError(.tokenRefreshFailed)) { try result.get() }
            #expect(error?.message.contains("next device token renewal attempt is in") == true)
            #expect(error?.statusCode == 502)
        }
        // After the first step (at most 250 ms) one caller tries again, and succeeds.
        clock.advance(0.25)
        #expect(try await broker.token().token.accessToken == "t3")
        #expect(grant.calls == 3)
        #expect(await broker.statistics.failedRenewals == 1)
    }

    @Test func theBackoffGrowsWhileTheOutageLasts() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        _ = try await broker.token()
        clock.advance(7200)
        var elapsed: TimeInterval = 0
        // Callers every 10 ms of test time for 20 s: attempts only when a step is over.
        for _ in 0..<2000 {
            grant.failNext(with: Self.outage)
            _ = try? await broker.token()
            clock.advance(0.01)
            elapsed += 0.01
        }
        // Over 20 s: with the shortest waits (half of each step: 0.125, 0.25, 0.5, 1, 2, 4, 8 s,
        // 15.9 s in all) 8 attempts fit; with the longest (0.25 … 8 s, 15.75 s) at least 7.
        let attempts = grant.calls - 1
        #expect(attempts >= 7)
        #expect(attempts <= 9)
    }

    @Test func aFailedRenewalInsideTheLeewayServesTheCurrentToken() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock, lifetime: 100)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        let first = try await broker.token()
        clock.advance(75)  // inside the 30 s leeway, not expired
        grant.failNext(with: Self.outage)
        let results = try await withThrowingTaskGroup(of: BrokeredToken.self) { group in
            for _ in 0..<200 { group.addTask { try await broker.token() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(results.allSatisfy { $0 == first })
        #expect(grant.calls == 2)
        #expect(await broker.statistics.staleServed == 1)
        // Until the next attempt is due, the token is served without asking the endpoint.
        for _ in 0..<100 { #expect(try await broker.token() == first) }
        #expect(grant.calls == 2)
        clock.advance(0.25)
        #expect(try await broker.token().token.accessToken == "t3")
        #expect(grant.calls == 3)
    }

    @Test func shortLivedTokensRenewForeverWithoutTrippingTheGuard() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock, lifetime: 2)
        let broker = AuthFixtures.broker(
            grant: grant,
            clock: clock,
            level: .device,
            configuration: .init(refreshLimit: RefreshLimit(maximumRefreshes: 5, window: .seconds(30)))
        )
        // One request every 0.5 s for 60 s with 2 s tokens: about 60 renewals, none refused.
        for _ in 0..<120 {
            _ = try await broker.token()
            clock.advance(0.5)
        }
        #expect(grant.calls >= 55)
    }
}
