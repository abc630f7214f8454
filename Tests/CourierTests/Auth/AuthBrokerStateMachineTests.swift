import Foundation
import Testing

@testable import Courier

/// The broker's decisions, driven without any I/O.
@Suite struct AuthBrokerStateMachineTests {
    typealias Machine = TokenBroker.StateMachine

    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func token(_ name: String, at date: Date, lifetime: TimeInterval = 600, refresh: String? = "r") -> OAuth2Token {
        OAuth2Token(
            accessToken: name,
            issuedAt: date,
            expiresAt: date.addingTimeInterval(lifetime),
            refreshToken: refresh
        )
    }

    func machine(limit: Int = 5) -> Machine {
        Machine(
            level: .user,
            leeway: .seconds(30),
            refreshLimit: RefreshLimit(maximumRefreshes: limit, window: .seconds(60))
        )
    }

    /// Loads an empty store and publishes `first`, returning its version.
    func loaded(_ machine: inout Machine, with first: OAuth2Token) throws -> UInt64 {
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        guard case .renew = machine.loadCompleted(load.id, result: .success(nil), now: start) else {
            throw Unexpected()
        }
        guard
            case .publish(let published) = machine.operationCompleted(
                load.id,
                result: .success(first),
                now: start,
                jitter: 1
            )
        else {
            throw Unexpected()
        }
        return published.version
    }

    struct Unexpected: Error {}

    @Test func firstRequestLoadsTheStoreAndOthersJoin() throws {
        var machine = machine()
        guard case .start(let load, let current) = machine.tokenRequested(now: start) else { throw Unexpected() }
        #expect(load.kind == .load)
        #expect(current == nil)
        guard case .join(let joined) = machine.tokenRequested(now: start) else { throw Unexpected() }
        #expect(joined == load.id)
        #expect(machine.fastPathToken == nil)
    }

    @Test func aValidStoredTokenResolvesWithoutRenewal() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        let stored = token("a", at: start)
        guard case .resolve(let resolved) = machine.loadCompleted(load.id, result: .success(stored), now: start) else {
            throw Unexpected()
        }
        #expect(resolved.token == stored)
        guard case .use(let used) = machine.tokenRequested(now: start) else { throw Unexpected() }
        #expect(used.version == resolved.version)
        #expect(machine.fastPathToken?.token.version == resolved.version)
    }

    @Test func anExpiredStoredTokenIsRenewedInTheSameOperation() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        let stored = token("old", at: start.addingTimeInterval(-700))
        guard
            case .renew(let current, let reason) = machine.loadCompleted(load.id, result: .success(stored), now: start)
        else {
            throw Unexpected()
        }
        #expect(current == stored)
        #expect(reason == .expired)
        guard case .join(let id) = machine.tokenRequested(now: start) else { throw Unexpected() }
        #expect(id == load.id)
    }

    @Test func renewalStartsWithinTheLeewayOnce() throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("a", at: start))
        let late = start.addingTimeInterval(600 - 29)  // inside the 30 s leeway
        guard case .start(let renewal, let current) = machine.tokenRequested(now: late) else { throw Unexpected() }
        #expect(renewal.kind == .renew(.expired))
        #expect(current?.accessToken == "a")
        // While it runs, the current token is still good: callers use it, no second renewal.
        for _ in 0..<100 {
            guard case .use(let token) = machine.tokenRequested(now: late) else { throw Unexpected() }
            #expect(token.token.accessToken == "a")
        }
        // Callers read it without the actor, until it expires.
        #expect(machine.fastPathToken?.token.token.accessToken == "a")
        #expect(machine.fastPathToken?.renewAt == start.addingTimeInterval(600))
        // Once the token has expired, callers wait for the renewal.
        for _ in 0..<100 {
            guard case .join(let id) = machine.tokenRequested(now: start.addingTimeInterval(600)) else {
                throw Unexpected()
            }
            #expect(id == renewal.id)
        }
    }

    @Test func aRenewalForARejectedOrMissingTokenIsWaitedFor() throws {
        var machine = machine()
        let first = try loaded(&machine, with: token("a", at: start))
        guard case .start(let renewal, _) = machine.tokenRejected(version: first, now: start) else {
            throw Unexpected()
        }
        // The server refused "a": nobody gets it again, however long it would still be valid.
        guard case .join(let id) = machine.tokenRequested(now: start) else { throw Unexpected() }
        #expect(id == renewal.id)
    }

    @Test func leewayIsCappedAtHalfTheLifetime() throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("short", at: start, lifetime: 10))
        // 30 s leeway would make a 10 s token stale at once; the cap (5 s) keeps it usable.
        guard case .use = machine.tokenRequested(now: start.addingTimeInterval(4)) else { throw Unexpected() }
        guard case .start = machine.tokenRequested(now: start.addingTimeInterval(5)) else { throw Unexpected() }
    }

    @Test func rejectionOfTheCurrentVersionRenewsOnceAndOldVersionsDoNot() throws {
        var machine = machine()
        let v1 = try loaded(&machine, with: token("a", at: start))
        guard case .start(let renewal, _) = machine.tokenRejected(version: v1, now: start) else { throw Unexpected() }
        #expect(renewal.kind == .renew(.rejected))
        #expect(machine.fastPathToken == nil)
        // The rest of the burst joins.
        guard case .join(let id) = machine.tokenRejected(version: v1, now: start) else { throw Unexpected() }
        #expect(id == renewal.id)
        guard
            case .publish(let v2) = machine.operationCompleted(
                renewal.id,
                result: .success(token("b", at: start)),
                now: start,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(v2.version > v1)
        // A late 401 for v1 gets v2 at once, with no renewal.
        guard case .use(let current) = machine.tokenRejected(version: v1, now: start) else { throw Unexpected() }
        #expect(current.version == v2.version)
        #expect(current.token.accessToken == "b")
    }

    @Test func aRefreshErrorFailsTheOperationAndKeepsTheToken() throws {
        var machine = machine()
        let v1 = try loaded(&machine, with: token("a", at: start))
        guard case .start(let renewal, _) = machine.tokenRejected(version: v1, now: start) else { throw Unexpected() }
        let failure = CourierError(kind: .tokenRefreshFailed, message: "503")
        guard
            case .fail(let error, let wipe) = machine.operationCompleted(
                renewal.id,
                result: .failure(failure),
                now: start,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(error.kind == .tokenRefreshFailed)
        #expect(error.level == .user)
        #expect(!wipe)
        #expect(machine.token?.accessToken == "a")
    }

    @Test func invalidGrantWipesAndBecomesUserNotAuthenticated() throws {
        var machine = machine()
        let v1 = try loaded(&machine, with: token("a", at: start))
        guard case .start(let renewal, _) = machine.tokenRejected(version: v1, now: start) else { throw Unexpected() }
        let failure = CourierError(
            kind: .grantRejected,
            message: "",
            oauthError: OAuth2Error(code: .invalidGrant),
            statusCode: 400
        )
        guard
            case .fail(let error, let wipe) = machine.operationCompleted(
                renewal.id,
                result: .failure(failure),
                now: start,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(error.kind == .userNotAuthenticated)
        #expect(error.oauthError?.code == .invalidGrant)
        #expect(wipe)
        #expect(machine.token == nil)
        #expect(machine.version > v1)
    }

    @Test func anExplicitGrantFailureNeverWipes() throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("a", at: start))
        guard case .start(let grant) = machine.grantRequested() else { throw Unexpected() }
        let failure = CourierError(kind: .grantRejected, message: "", oauthError: OAuth2Error(code: .invalidGrant))
        guard
            case .fail(let error, let wipe) = machine.operationCompleted(
                grant.id,
                result: .failure(failure),
                now: start,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(error.kind == .grantRejected)
        #expect(!wipe)
        #expect(machine.token?.accessToken == "a")
    }

    @Test func aGrantWaitsForTheOperationInFlight() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        guard case .waitFor(let id) = machine.grantRequested() else { throw Unexpected() }
        #expect(id == load.id)
    }

    @Test func successfulRenewalsAreLimitedPerWindow() throws {
        var machine = machine(limit: 3)
        var version = try loaded(&machine, with: token("t0", at: start))
        var now = start
        for round in 1...3 {
            guard case .start(let renewal, _) = machine.tokenRejected(version: version, now: now) else {
                throw Unexpected()
            }
            guard
                case .publish(let next) = machine.operationCompleted(
                    renewal.id,
                    result: .success(token("t\(round)", at: now)),
                    now: now,
                    jitter: 1
                )
            else { throw Unexpected() }
            version = next.version
            now = now.addingTimeInterval(1)
        }
        guard case .fail(let error) = machine.tokenRejected(version: version, now: now) else { throw Unexpected() }
        #expect(error.kind == .excessiveRefresh)
        // Once the window has passed, renewing is allowed again.
        guard case .start = machine.tokenRejected(version: version, now: now.addingTimeInterval(61)) else {
            throw Unexpected()
        }
    }

    @Test func failedRenewalsDoNotCountTowardsTheLimit() throws {
        var machine = machine(limit: 1)
        let version = try loaded(&machine, with: token("a", at: start))
        var now = start
        for _ in 0..<5 {
            guard case .start(let renewal, _) = machine.tokenRejected(version: version, now: now) else {
                throw Unexpected()
            }
            _ = machine.operationCompleted(
                renewal.id,
                result: .failure(CourierError(kind: .tokenRefreshFailed, message: "")),
                now: now,
                jitter: 1
            )
            now = try #require(machine.retryAt)
        }
    }

    @Test func wipingAbandonsTheOperationAndDiscardsItsResult() throws {
        var machine = machine()
        let v1 = try loaded(&machine, with: token("a", at: start))
        guard case .start(let renewal, _) = machine.tokenRejected(version: v1, now: start) else { throw Unexpected() }
        #expect(machine.wiped() == renewal.id)
        guard
            case .discard = machine.operationCompleted(
                renewal.id,
                result: .success(token("b", at: start)),
                now: start,
                jitter: 1
            )
        else {
            throw Unexpected()
        }
        #expect(machine.token == nil)
        // The next caller starts from "no token", without reading the store again.
        guard case .start(let next, let current) = machine.tokenRequested(now: start) else { throw Unexpected() }
        #expect(next.kind == .renew(.noToken))
        #expect(current == nil)
    }
}
