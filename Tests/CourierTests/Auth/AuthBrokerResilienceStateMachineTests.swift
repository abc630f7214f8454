import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The broker's rules for a failing token endpoint and for refresh loops, driven without I/O:
/// the loop guard, backoff, `Retry-After` and serve-stale.
@Suite struct AuthBrokerResilienceStateMachineTests {
    typealias Machine = TokenBroker.StateMachine

    let start = Date(timeIntervalSince1970: 1_800_000_000)

    struct Unexpected: Error {}

    func token(_ name: String, at date: Date, lifetime: TimeInterval = 600) -> OAuth2Token {
        OAuth2Token(accessToken: name, issuedAt: date, expiresAt: date.addingTimeInterval(lifetime), refreshToken: "r")
    }

    func machine(limit: Int = 5, window: Duration = .seconds(30)) -> Machine {
        Machine(
            level: .user,
            leeway: .seconds(30),
            refreshLimit: RefreshLimit(maximumRefreshes: limit, window: window)
        )
    }

    /// A machine whose store was empty and whose first renewal gave `first` at `date`.
    func loaded(_ machine: inout Machine, with first: OAuth2Token, at date: Date) throws -> BrokeredToken {
        guard case .start(let load, _) = machine.tokenRequested(now: date) else { throw Unexpected() }
        guard case .renew = machine.loadCompleted(load.id, result: .success(nil), now: date) else {
            throw Unexpected()
        }
        return try publish(&machine, load.id, first, at: date)
    }

    func publish(
        _ machine: inout Machine,
        _ id: Machine.OperationID,
        _ new: OAuth2Token,
        at date: Date
    ) throws
        -> BrokeredToken
    {
        guard case .publish(let published) = machine.operationCompleted(id, result: .success(new), now: date, jitter: 1)
        else { throw Unexpected() }
        return published
    }

    /// Starts a renewal for `action` and returns its operation.
    func started(_ action: Machine.TokenAction) throws -> Machine.Operation {
        guard case .start(let operation, _) = action else { throw Unexpected() }
        return operation
    }

    func failed(_ action: Machine.TokenAction) throws -> CourierError {
        guard case .fail(let error) = action else { throw Unexpected() }
        return error
    }

    static let outage = CourierError(
        kind: .tokenRefreshFailed,
        message: "the token request answered 502 without an OAuth error",
        statusCode: 502,
        endpoint: "POST /oauth/token"
    )

    static func status(_ code: Int, retryAfter: String?) -> CourierError {
        var fields = HTTPFields()
        if let retryAfter { fields[.retryAfter] = retryAfter }
        return CourierError(
            kind: .tokenRefreshFailed,
            message: "the token request answered \(code) without an OAuth error",
            statusCode: code,
            endpoint: "POST /oauth/token",
            response: Response(head: HTTPResponse(status: .init(code: code), headerFields: fields))
        )
    }

    // MARK: The loop guard

    @Test func renewalsForExpiryNeverCountTowardTheLoopGuard() throws {
        var machine = machine(limit: 1)
        var now = start
        _ = try loaded(&machine, with: token("t0", at: now, lifetime: 2), at: now)
        // Two-second tokens renewed at half their lifetime, for ten minutes: 600 renewals.
        for round in 1...600 {
            now = now.addingTimeInterval(1)
            let renewal = try started(machine.tokenRequested(now: now))
            #expect(renewal.kind == .renew(.expired))
            _ = try publish(&machine, renewal.id, token("t\(round)", at: now, lifetime: 2), at: now)
        }
    }

    @Test func aRejectionCountsOnlyRightAfterTheTokenWasObtained() throws {
        var machine = machine(limit: 1, window: .seconds(60))
        var now = start
        var current = try loaded(&machine, with: token("t0", at: now), at: now)
        // A token that served for a while and is then revoked: not a loop, however often.
        for round in 1...5 {
            now = now.addingTimeInterval(RefreshLimit.freshness.inSeconds + 1)
            let renewal = try started(machine.tokenRejected(version: current.version, now: now))
            current = try publish(&machine, renewal.id, token("s\(round)", at: now), at: now)
        }
        // Rejected at once: the first counts (the limit is one) …
        now = now.addingTimeInterval(1)
        let counted = try started(machine.tokenRejected(version: current.version, now: now))
        current = try publish(&machine, counted.id, token("fresh", at: now), at: now)
        // … and the next fresh rejection trips the guard.
        now = now.addingTimeInterval(1)
        let error = try failed(machine.tokenRejected(version: current.version, now: now))
        #expect(error.kind == .excessiveRefresh)
        #expect(error.level == .user)
        #expect(error.message.contains("not renewing"))
    }

    @Test func aStoredTokenRejectedAtOnceIsNoLoop() throws {
        var machine = machine(limit: 1)
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        guard
            case .resolve(let stored) = machine.loadCompleted(
                load.id,
                result: .success(token("s", at: start)),
                now: start
            )
        else { throw Unexpected() }
        let renewal = try started(machine.tokenRejected(version: stored.version, now: start))
        let next = try publish(&machine, renewal.id, token("a", at: start), at: start)
        // The first fresh rejection still renews: the stored token's did not count.
        _ = try started(machine.tokenRejected(version: next.version, now: start))
    }

    @Test func theTrippedGuardClosesTheLevelForTheCooldownOnly() throws {
        var machine = machine(limit: 2)
        var current = try loaded(&machine, with: token("t0", at: start), at: start)
        for round in 1...2 {
            let renewal = try started(machine.tokenRejected(version: current.version, now: start))
            current = try publish(&machine, renewal.id, token("t\(round)", at: start), at: start)
        }
        let tripped = try failed(machine.tokenRejected(version: current.version, now: start))
        #expect(tripped.kind == .excessiveRefresh)
        #expect(machine.guardClosedUntil == start.addingTimeInterval(RefreshLimit.cooldown.inSeconds))
        // The whole level fails while the guard is closed: the rejected token is not served.
        #expect(machine.fastPathToken == nil)
        let almost = start.addingTimeInterval(RefreshLimit.cooldown.inSeconds - 0.01)
        let closed = try failed(machine.tokenRequested(now: almost))
        #expect(closed.kind == .excessiveRefresh)
        #expect(closed.message.contains("another 10 ms"))
        // Then renewals happen again, counted afresh.
        let reopened = start.addingTimeInterval(RefreshLimit.cooldown.inSeconds)
        let renewal = try started(machine.tokenRequested(now: reopened))
        #expect(renewal.kind == .renew(.rejected))
        current = try publish(&machine, renewal.id, token("t3", at: reopened), at: reopened)
        _ = try started(machine.tokenRejected(version: current.version, now: reopened))
    }

    // MARK: Backoff

    @Test func backoffStepsDoubleFromAQuarterSecondAndAreCapped() {
        let backoff = RenewalBackoff()
        let steps = (1...10).map { backoff.step(afterFailures: $0) }
        #expect(
            steps == [
                .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2), .seconds(4), .seconds(8),
                .seconds(16), .seconds(30), .seconds(30), .seconds(30),
            ]
        )
        #expect(backoff.step(afterFailures: 10_000) == .seconds(30))
        // Jitter spreads each wait between half the step and the whole step.
        #expect(backoff.delay(afterFailures: 1, jitter: 0) == .milliseconds(125))
        #expect(backoff.delay(afterFailures: 1, jitter: 1) == .milliseconds(250))
        #expect(backoff.delay(afterFailures: 3, jitter: 0.5) == .milliseconds(750))
        #expect(backoff.delay(afterFailures: 1, jitter: 7) == .milliseconds(250))
    }

    @Test func failedRenewalsBackOffAndCallersGetTheLastFailureAtOnce() throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("t0", at: start, lifetime: 60), at: start)
        var now = start.addingTimeInterval(61)  // expired: nothing to serve
        let expected: [TimeInterval] = [0.25, 0.5, 1, 2, 4, 8, 16, 30, 30]
        for step in expected {
            let renewal = try started(machine.tokenRequested(now: now))
            guard
                case .fail(let error, let wipe) = machine.operationCompleted(
                    renewal.id,
                    result: .failure(Self.outage),
                    now: now,
                    jitter: 1
                )
            else { throw Unexpected() }
            #expect(!wipe)
            #expect(error.kind == .tokenRefreshFailed)
            #expect(error.statusCode == 502)
            #expect(machine.retryAt == now.addingTimeInterval(step))
            // However many callers arrive before the step is over: the last failure, no attempt.
            for _ in 0..<100 {
                let refused = try failed(machine.tokenRequested(now: now.addingTimeInterval(step * 0.99)))
                #expect(refused.kind == .tokenRefreshFailed)
                #expect(refused.statusCode == 502)
                #expect(refused.endpoint == "POST /oauth/token")
                #expect(refused.message.contains("next user token renewal attempt is in"))
            }
            now = now.addingTimeInterval(step)
        }
        // A success resets the backoff.
        let renewal = try started(machine.tokenRequested(now: now))
        _ = try publish(&machine, renewal.id, token("ok", at: now, lifetime: 60), at: now)
        #expect(machine.retryAt == nil)
        #expect(machine.consecutiveFailures == 0)
        now = now.addingTimeInterval(61)
        let again = try started(machine.tokenRequested(now: now))
        _ = machine.operationCompleted(again.id, result: .failure(Self.outage), now: now, jitter: 1)
        #expect(machine.retryAt == now.addingTimeInterval(0.25))
    }

    @Test func aRejectedTokenIsNotRenewedWhileBackingOff() throws {
        var machine = machine()
        let current = try loaded(&machine, with: token("a", at: start), at: start)
        let renewal = try started(machine.tokenRejected(version: current.version, now: start))
        _ = machine.operationCompleted(renewal.id, result: .failure(Self.outage), now: start, jitter: 0)
        #expect(machine.retryAt == start.addingTimeInterval(0.125))
        let refused = try failed(machine.tokenRejected(version: current.version, now: start.addingTimeInterval(0.1)))
        #expect(refused.kind == .tokenRefreshFailed)
        #expect(machine.fastPathToken == nil)
        _ = try started(machine.tokenRequested(now: start.addingTimeInterval(0.125)))
    }

    @Test func aSignInIsNotHeldBackByTheBackoffAndEndsIt() throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("a", at: start, lifetime: 10), at: start)
        let now = start.addingTimeInterval(11)
        let renewal = try started(machine.tokenRequested(now: now))
        _ = machine.operationCompleted(renewal.id, result: .failure(Self.outage), now: now, jitter: 1)
        guard case .start(let grant) = machine.grantRequested() else { throw Unexpected() }
        _ = try publish(&machine, grant.id, token("signed-in", at: now), at: now)
        #expect(machine.retryAt == nil)
        guard case .use(let used) = machine.tokenRequested(now: now) else { throw Unexpected() }
        #expect(used.token.accessToken == "signed-in")
    }

    // MARK: Retry-After

    @Test(arguments: [429, 503])
    func retryAfterSecondsMakeTheNextAttemptWait(status: Int) throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("a", at: start, lifetime: 10), at: start)
        let now = start.addingTimeInterval(11)
        let renewal = try started(machine.tokenRequested(now: now))
        guard
            case .fail(let error, _) = machine.operationCompleted(
                renewal.id,
                result: .failure(Self.status(status, retryAfter: "7")),
                now: now,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(error.statusCode == status)
        #expect(error.message.contains("attempt is in 7.0 s"))
        #expect(machine.retryAt == now.addingTimeInterval(7))
        _ = try failed(machine.tokenRequested(now: now.addingTimeInterval(6.9)))
        _ = try started(machine.tokenRequested(now: now.addingTimeInterval(7)))
    }

    @Test func retryAfterAsADateIsHonouredAndCapped() throws {
        var machine = machine()
        let issued = start.addingTimeInterval(-100)
        _ = try loaded(&machine, with: token("a", at: issued, lifetime: 10), at: issued)
        // 2027-01-15T08:00:00Z; the machine's clock is 20 s before it.
        let now = Date(timeIntervalSince1970: 1_800_000_000 - 20)
        let renewal = try started(machine.tokenRequested(now: now))
        _ = machine.operationCompleted(
            renewal.id,
            result: .failure(Self.status(503, retryAfter: "Fri, 15 Jan 2027 08:00:00 GMT")),
            now: now,
            jitter: 1
        )
        #expect(machine.retryAt == Date(timeIntervalSince1970: 1_800_000_000))

        let later = Date(timeIntervalSince1970: 1_800_000_000)
        let next = try started(machine.tokenRequested(now: later))
        _ = machine.operationCompleted(
            next.id,
            result: .failure(Self.status(429, retryAfter: "86400")),
            now: later,
            jitter: 1
        )
        #expect(machine.retryAt == later.addingTimeInterval(60))  // capped
    }

    @Test func retryAfterIsIgnoredOnOtherStatusesAndNeverShortensTheBackoff() throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("a", at: start, lifetime: 10), at: start)
        var now = start.addingTimeInterval(11)
        let first = try started(machine.tokenRequested(now: now))
        _ = machine.operationCompleted(
            first.id,
            result: .failure(Self.status(500, retryAfter: "20")),
            now: now,
            jitter: 1
        )
        #expect(machine.retryAt == now.addingTimeInterval(0.25))
        // Wrapped in another error, and shorter than the step: the step wins.
        for _ in 0..<5 {
            now = try #require(machine.retryAt)
            let renewal = try started(machine.tokenRequested(now: now))
            let wrapped = CourierError(
                kind: .tokenRefreshFailed,
                message: "",
                underlying: Self.status(429, retryAfter: "1")
            )
            _ = machine.operationCompleted(renewal.id, result: .failure(wrapped), now: now, jitter: 1)
        }
        #expect(machine.consecutiveFailures == 6)
        #expect(machine.retryAt == now.addingTimeInterval(8))
    }

    // MARK: Serve stale

    @Test func aFailedRenewalInsideTheLeewayServesTheStillValidToken() throws {
        var machine = machine()
        let current = try loaded(&machine, with: token("a", at: start), at: start)
        let inLeeway = start.addingTimeInterval(600 - 20)
        let renewal = try started(machine.tokenRequested(now: inLeeway))
        #expect(renewal.kind == .renew(.expired))
        guard
            case .serveStale(let served, let error, let retryIn) = machine.operationCompleted(
                renewal.id,
                result: .failure(Self.outage),
                now: inLeeway,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(served == current)
        #expect(error.kind == .tokenRefreshFailed)
        #expect(retryIn == .milliseconds(250))
        // Callers keep getting it, from the fast path too, until the next attempt is due.
        guard case .use(let used) = machine.tokenRequested(now: inLeeway.addingTimeInterval(0.2)) else {
            throw Unexpected()
        }
        #expect(used == current)
        let fast = try #require(machine.fastPathToken)
        #expect(fast.token == current)
        #expect(fast.renewAt == inLeeway.addingTimeInterval(0.25))
        // Then the renewal is tried again, and its success replaces the token.
        let retry = try started(machine.tokenRequested(now: inLeeway.addingTimeInterval(0.25)))
        let renewed = try publish(&machine, retry.id, token("b", at: inLeeway), at: inLeeway.addingTimeInterval(0.25))
        #expect(renewed.version > current.version)
    }

    @Test func aStaleTokenIsServedUntilItExpiresAndNoLonger() throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("a", at: start, lifetime: 60), at: start)
        var now = start.addingTimeInterval(31)  // leeway: half the lifetime
        while now < start.addingTimeInterval(60) {
            let renewal = try started(machine.tokenRequested(now: now))
            guard
                case .serveStale = machine.operationCompleted(
                    renewal.id,
                    result: .failure(Self.outage),
                    now: now,
                    jitter: 1
                )
            else { throw Unexpected() }
            let fast = try #require(machine.fastPathToken)
            #expect(fast.renewAt <= start.addingTimeInterval(60))
            now = try #require(machine.retryAt)
        }
        // Expired while the backoff runs: the last failure, not the token.
        let expired = try failed(machine.tokenRequested(now: start.addingTimeInterval(60)))
        #expect(expired.kind == .tokenRefreshFailed)
        #expect(machine.fastPathToken?.renewAt ?? .distantPast <= start.addingTimeInterval(60))
    }

    @Test func aStoredTokenInsideItsLeewayIsServedWhenItsRenewalFails() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        let stored = token("s", at: start.addingTimeInterval(-590))  // 10 s left
        guard case .renew = machine.loadCompleted(load.id, result: .success(stored), now: start) else {
            throw Unexpected()
        }
        guard
            case .serveStale(let served, _, _) = machine.operationCompleted(
                load.id,
                result: .failure(Self.outage),
                now: start,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(served.token == stored)
    }

    @Test func invalidGrantInsideTheLeewayStillSignsTheUserOut() throws {
        var machine = machine()
        _ = try loaded(&machine, with: token("a", at: start), at: start)
        let inLeeway = start.addingTimeInterval(600 - 20)
        let renewal = try started(machine.tokenRequested(now: inLeeway))
        let rejected = CourierError(kind: .grantRejected, message: "", oauthError: OAuth2Error(code: .invalidGrant))
        guard
            case .fail(let error, let wipe) = machine.operationCompleted(
                renewal.id,
                result: .failure(rejected),
                now: inLeeway,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(error.kind == .userNotAuthenticated)
        #expect(wipe)
        #expect(machine.token == nil)
    }
}

extension AuthBrokerResilienceStateMachineTests {
    @Test func nothingToRenewWithDoesNotBackOff() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        _ = machine.loadCompleted(load.id, result: .success(nil), now: start)
        let noUser = CourierError(kind: .userNotAuthenticated, message: "there is no user token")
        guard
            case .fail(let error, _) = machine.operationCompleted(
                load.id,
                result: .failure(noUser),
                now: start,
                jitter: 1
            )
        else { throw Unexpected() }
        #expect(error.message == "there is no user token")
        #expect(machine.retryAt == nil)
        _ = try started(machine.tokenRequested(now: start))
    }

    @Test func wipingStartsTheBackoffAndTheGuardAfresh() throws {
        var machine = machine(limit: 1)
        var current = try loaded(&machine, with: token("a", at: start), at: start)
        let counted = try started(machine.tokenRejected(version: current.version, now: start))
        current = try publish(&machine, counted.id, token("b", at: start), at: start)
        _ = try failed(machine.tokenRejected(version: current.version, now: start))
        #expect(machine.guardClosedUntil != nil)
        _ = machine.wiped()
        #expect(machine.guardClosedUntil == nil)
        let renewal = try started(machine.tokenRequested(now: start))
        _ = machine.operationCompleted(renewal.id, result: .failure(Self.outage), now: start, jitter: 1)
        #expect(machine.retryAt != nil)
        _ = machine.wiped()
        #expect(machine.retryAt == nil)
        _ = try started(machine.tokenRequested(now: start))
    }
}
