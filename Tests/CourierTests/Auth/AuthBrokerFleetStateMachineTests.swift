import Foundation
import Testing

@testable import Courier

/// The broker's coordination with other processes through a shared store, driven without a
/// store, a socket or an actor: each test feeds the machine the results a store and a server
/// would give and checks the step it asks for next.
@Suite struct AuthBrokerFleetStateMachineTests {
    typealias Machine = TokenBroker.StateMachine

    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let origin = ContinuousClock.now

    struct Unexpected: Error {}

    func machine() -> Machine {
        Machine(
            level: .user,
            leeway: .seconds(30),
            refreshLimit: RefreshLimit(maximumRefreshes: 100, window: .seconds(60)),
            sharesStore: true,
            leaseDuration: .seconds(10)
        )
    }

    /// `seconds` after the start, on both clocks.
    func at(_ seconds: Double) -> Machine.Moment {
        Machine.Moment(
            date: start.addingTimeInterval(seconds),
            instant: origin + .milliseconds(Int(seconds * 1000)),
            jitter: 0.5
        )
    }

    /// A token issued at the start, good for `lifetime` seconds.
    func token(_ name: String, lifetime: TimeInterval = 600, refresh: String = "r") -> OAuth2Token {
        OAuth2Token(
            accessToken: name,
            issuedAt: start,
            expiresAt: start.addingTimeInterval(lifetime),
            refreshToken: refresh
        )
    }

    func entry(_ token: OAuth2Token?, _ version: UInt64) -> Result<TokenStoreEntry, any Error> {
        .success(TokenStoreEntry(token: token, version: version))
    }

    func lease(_ holder: String = "me") -> TokenStoreLease {
        TokenStoreLease(
            key: TokenStoreKey(clientID: "c", level: .user),
            holder: holder,
            expiresAt: start.addingTimeInterval(10)
        )
    }

    static let outage = CourierError(kind: .tokenStoreFailed, message: "connection refused")
    static let refused = CourierError(
        kind: .grantRejected,
        message: "invalid_grant",
        oauthError: OAuth2Error(code: .invalidGrant)
    )

    /// A step as a short name, for readable expectations.
    func name(_ step: Machine.Step) -> String {
        switch step {
        case .readStore: "readStore"
        case .readEntry: "readEntry"
        case .acquireLease: "acquireLease"
        case .pause: "pause"
        case .obtain(let current, let reason): "obtain(\(current?.accessToken ?? "nil"), \(reason.rawValue))"
        case .write(let token, let version): "write(\(token?.accessToken ?? "nil"), \(version.map(String.init) ?? "-"))"
        case .releaseLease: "releaseLease"
        case .finish(.resolve(let token)): "resolve(\(token.token.accessToken))"
        case .finish(.fail(let error)): "fail(\((error as? CourierError)?.kind.description ?? "\(error)"))"
        case .finish(.discard(let revoke)): "discard(\(revoke?.accessToken ?? "nil"))"
        }
    }

    /// Starts the level's first operation (a load) and reads a stored token that is due:
    /// the renewal that follows is coordinated, and its first step is a read of the entry.
    func loadDueToken(_ machine: inout Machine, version: UInt64 = 3) throws -> Machine.OperationID {
        guard case .start(let load, _) = machine.tokenRequested(now: start.addingTimeInterval(590)) else {
            throw Unexpected()
        }
        #expect(name(machine.firstStep(of: load.id, at: at(590))) == "readStore")
        let step = machine.storeRead(load.id, result: entry(token("old"), version), at: at(590))
        #expect(name(step) == "readEntry")
        return load.id
    }

    /// From the first read of the entry to holding the lease and asking the server.
    func takeLeaseAndObtain(
        _ machine: inout Machine,
        _ id: Machine.OperationID,
        stored: OAuth2Token,
        version: UInt64
    )
        throws
    {
        #expect(name(machine.entryRead(id, result: entry(stored, version), at: at(590))) == "acquireLease")
        #expect(name(machine.leaseAcquired(id, result: .success(lease()), at: at(590))) == "readEntry")
        let step = machine.entryRead(id, result: entry(stored, version), at: at(590))
        #expect(name(step) == "obtain(\(stored.accessToken), expired)")
    }

    // MARK: Adoption

    @Test func aUsableTokenAnotherProcessStoredIsAdoptedWithoutAskingTheServer() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        let step = machine.entryRead(id, result: entry(token("theirs", lifetime: 1200), 4), at: at(590))
        #expect(name(step) == "resolve(theirs)")
        #expect(machine.statistics.adoptions == 1)
        #expect(machine.statistics.renewals == 0)
        #expect(machine.sharedVersion == 4)
        #expect(machine.takeNotes().contains(.published(version: 2, adopted: true, reason: .expired)))
        #expect(machine.operation == nil)
    }

    @Test func aTokenAnotherProcessStoredThatIsAlreadyDueIsRenewedFromNotAdopted() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        // Their token is due too, but its refresh token is the newest: renew from it.
        try takeLeaseAndObtain(&machine, id, stored: token("theirs", lifetime: 595, refresh: "r2"), version: 4)
        #expect(machine.statistics.adoptions == 0)
        let write = machine.obtained(id, result: .success(token("new", lifetime: 1200)), at: at(591))
        #expect(name(write) == "write(new, 4)")
        let written = machine.written(id, result: .success(TokenStoreEntry(token: nil, version: 5)), at: at(591))
        #expect(name(written) == "releaseLease")
        #expect(name(machine.leaseReleased(id, failed: false, at: at(591))) == "resolve(new)")
        #expect(machine.sharedVersion == 5)
        #expect(machine.statistics.renewals == 1)
        let notes = machine.takeNotes()
        #expect(notes.contains(.leaseTaken(.expired)))
        #expect(notes.contains(.published(version: 2, adopted: false, reason: .expired)))
    }

    @Test func aTokenWrittenBetweenTheFirstReadAndTheLeaseIsAdopted() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        #expect(name(machine.entryRead(id, result: entry(token("old"), 3), at: at(590))) == "acquireLease")
        #expect(name(machine.leaseAcquired(id, result: .success(lease()), at: at(590))) == "readEntry")
        let settled = machine.entryRead(id, result: entry(token("theirs", lifetime: 1200), 4), at: at(590))
        // The lease is released before the waiters get the adopted token.
        #expect(name(settled) == "releaseLease")
        #expect(name(machine.leaseReleased(id, failed: true, at: at(590))) == "resolve(theirs)")
        #expect(machine.takeNotes().contains(.releaseFailed))
        #expect(machine.statistics.renewals == 0)
    }

    // MARK: Compare-and-swap

    @Test func aLeaseLostMidRenewalEndsWithTheWinnersToken() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        // The renewal outlived the lease: another process took it, renewed and wrote first.
        #expect(
            name(machine.obtained(id, result: .success(token("mine", lifetime: 1200)), at: at(605))) == "write(mine, 3)"
        )
        #expect(name(machine.written(id, result: .success(nil), at: at(605))) == "readEntry")
        let winner = machine.entryRead(id, result: entry(token("winner", lifetime: 1200), 6), at: at(605))
        #expect(name(winner) == "releaseLease")
        #expect(name(machine.leaseReleased(id, failed: false, at: at(605))) == "resolve(winner)")
        #expect(machine.statistics.conflicts == 1)
        #expect(machine.statistics.adoptions == 1)
        #expect(machine.sharedVersion == 6)
        #expect(machine.takeNotes().contains(.conflict(version: 6)))
    }

    @Test func anEntryRemovedDuringTheRenewalStaysRemoved() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        _ = machine.obtained(id, result: .success(token("mine", lifetime: 1200)), at: at(591))
        #expect(name(machine.written(id, result: .success(nil), at: at(591))) == "readEntry")
        #expect(name(machine.entryRead(id, result: entry(nil, 7), at: at(591))) == "releaseLease")
        // The token serves this process; nothing writes over the removal.
        #expect(name(machine.leaseReleased(id, failed: false, at: at(591))) == "resolve(mine)")
        #expect(machine.takeNotes().contains(.removedDuringRenewal))
    }

    @Test func aStoreThatFailsTheWriteKeepsTheRenewedTokenAndDegrades() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        _ = machine.obtained(id, result: .success(token("mine", lifetime: 1200)), at: at(591))
        #expect(name(machine.written(id, result: .failure(Self.outage), at: at(591))) == "releaseLease")
        #expect(name(machine.leaseReleased(id, failed: true, at: at(591))) == "resolve(mine)")
        #expect(machine.storeIsDegraded)
    }

    // MARK: Waiting for another process

    @Test func aLeaseHeldByALiveHolderPastTheWaitIsLeftAndTheLevelRenewsAlone() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)  // the renewal begins at 590 s
        let seen = token("seen", refresh: "r2")  // due too, with the newest refresh token
        #expect(name(machine.entryRead(id, result: entry(seen, 4), at: at(595))) == "acquireLease")
        guard case .pause(let first) = machine.leaseAcquired(id, result: .success(nil), at: at(595)) else {
            throw Unexpected()
        }
        #expect(first >= .milliseconds(50) && first <= .milliseconds(100))
        #expect(machine.statistics.leaseWaits == 1)
        #expect(name(machine.paused(id)) == "readEntry")
        #expect(name(machine.entryRead(id, result: entry(seen, 4), at: at(600))) == "acquireLease")
        #expect(name(machine.leaseAcquired(id, result: .success(nil), at: at(600))) == "pause")
        _ = machine.paused(id)
        _ = machine.entryRead(id, result: entry(seen, 4), at: at(605.1))
        // One and a half lease durations after the renewal began (not after the first
        // refusal): renew alone, from the entry's token, still writing with compare-and-swap.
        let alone = machine.leaseAcquired(id, result: .success(nil), at: at(605.1))
        #expect(name(alone) == "obtain(seen, expired)")
        #expect(machine.statistics.leaseWaits == 1)
        #expect(machine.statistics.localRenewals == 1)
        let notes = machine.takeNotes()
        #expect(notes.filter { if case .degraded = $0 { true } else { false } }.count == 1)
        #expect(
            name(machine.obtained(id, result: .success(token("new", lifetime: 1200)), at: at(606))) == "write(new, 4)"
        )
        #expect(
            name(machine.written(id, result: .success(TokenStoreEntry(token: nil, version: 5)), at: at(606)))
                == "resolve(new)"
        )
    }

    @Test func aWaiterAdoptsWhatTheLeaseHolderWrites() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        _ = machine.entryRead(id, result: entry(token("old"), 3), at: at(590))
        #expect(name(machine.leaseAcquired(id, result: .success(nil), at: at(590))) == "pause")
        _ = machine.paused(id)
        #expect(
            name(machine.entryRead(id, result: entry(token("holders", lifetime: 1200), 4), at: at(591)))
                == "resolve(holders)"
        )
        #expect(machine.statistics.adoptions == 1)
        #expect(machine.statistics.renewals == 0)
    }

    @Test func aStoreErrorDuringTheWaitRenewsAloneAndTheNextSuccessRecovers() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        _ = machine.entryRead(id, result: entry(token("old"), 3), at: at(590))
        _ = machine.leaseAcquired(id, result: .success(nil), at: at(590))
        _ = machine.paused(id)
        #expect(name(machine.entryRead(id, result: .failure(Self.outage), at: at(591))) == "obtain(old, expired)")
        #expect(machine.statistics.localRenewals == 1)
        #expect(machine.storeIsDegraded)
        // The write fails too: still one warning for the episode.
        _ = machine.obtained(id, result: .success(token("new", lifetime: 650)), at: at(591))
        #expect(name(machine.written(id, result: .failure(Self.outage), at: at(591))) == "resolve(new)")
        let degraded = machine.takeNotes().filter { if case .degraded = $0 { true } else { false } }
        #expect(degraded.count == 1)
        // The next renewal finds the store again.
        guard case .start(let next, _) = machine.tokenRequested(now: start.addingTimeInterval(625)) else {
            throw Unexpected()
        }
        #expect(name(machine.firstStep(of: next.id, at: at(625))) == "readEntry")
        _ = machine.entryRead(next.id, result: entry(token("old"), 3), at: at(625))
        _ = machine.leaseAcquired(next.id, result: .success(lease()), at: at(625))
        _ = machine.entryRead(next.id, result: entry(token("old"), 3), at: at(625))
        #expect(!machine.storeIsDegraded)
        #expect(machine.takeNotes().contains(.recovered))
    }

    @Test func aLeaseTheStoreCannotGrantRenewsAlone() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        _ = machine.entryRead(id, result: entry(token("old"), 3), at: at(590))
        #expect(name(machine.leaseAcquired(id, result: .failure(Self.outage), at: at(590))) == "obtain(old, expired)")
        #expect(machine.statistics.localRenewals == 1)
    }

    // MARK: A refused refresh token

    @Test func aRefusedRefreshTokenAnotherProcessHadRenewedWipesNothing() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        #expect(name(machine.obtained(id, result: .failure(Self.refused), at: at(591))) == "readEntry")
        let theirs = token("theirs", lifetime: 1200, refresh: "r9")
        #expect(name(machine.entryRead(id, result: entry(theirs, 7), at: at(591))) == "releaseLease")
        #expect(name(machine.leaseReleased(id, failed: false, at: at(591))) == "resolve(theirs)")
        #expect(machine.takeNotes().contains(.refusedButRenewedElsewhere(version: 7)))
        #expect(machine.token?.accessToken == "theirs")
    }

    @Test func aRefusedRefreshTokenThatIsStillSharedIsWipedWithCompareAndSwap() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        _ = machine.obtained(id, result: .failure(Self.refused), at: at(591))
        #expect(name(machine.entryRead(id, result: entry(token("old"), 5), at: at(591))) == "releaseLease")
        #expect(name(machine.leaseReleased(id, failed: false, at: at(591))) == "write(nil, 5)")
        let wiped = machine.written(id, result: .success(TokenStoreEntry(token: nil, version: 6)), at: at(591))
        #expect(name(wiped) == "fail(userNotAuthenticated)")
        #expect(machine.sharedVersion == 6)
        #expect(machine.token == nil)
    }

    @Test func aWipeThatLosesItsCompareAndSwapLeavesTheOtherProcesssToken() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        _ = machine.obtained(id, result: .failure(Self.refused), at: at(591))
        _ = machine.entryRead(id, result: entry(token("old"), 5), at: at(591))
        _ = machine.leaseReleased(id, failed: false, at: at(591))
        #expect(name(machine.written(id, result: .success(nil), at: at(591))) == "fail(userNotAuthenticated)")
        #expect(machine.takeNotes().contains(.wipeSkipped))
    }

    @Test func aStoreErrorBeforeTheWipeWipesNothing() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        _ = machine.obtained(id, result: .failure(Self.refused), at: at(591))
        #expect(name(machine.entryRead(id, result: .failure(Self.outage), at: at(591))) == "releaseLease")
        // Unknown state: nothing is removed that another process may have written.
        #expect(name(machine.leaseReleased(id, failed: false, at: at(591))) == "fail(userNotAuthenticated)")
    }

    // MARK: Logout

    @Test func logoutDuringALeasedRenewalReleasesTheLeaseAndRevokesTheToken() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        #expect(machine.wiped() == id)
        // Nothing is written: the token goes back to the server.
        #expect(name(machine.obtained(id, result: .success(token("orphan")), at: at(591))) == "releaseLease")
        #expect(name(machine.leaseReleased(id, failed: false, at: at(591))) == "discard(orphan)")
        #expect(machine.progress.isEmpty)
    }

    @Test func logoutWhileWaitingForTheLeaseStopsWaiting() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        _ = machine.entryRead(id, result: entry(token("old"), 3), at: at(590))
        _ = machine.leaseAcquired(id, result: .success(nil), at: at(590))
        _ = machine.wiped()
        #expect(name(machine.paused(id)) == "discard(nil)")
        #expect(machine.statistics.renewals == 0)
    }

    @Test func logoutDuringTheLoadDropsIt() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        _ = machine.firstStep(of: load.id, at: at(0))
        _ = machine.wiped()
        #expect(name(machine.storeRead(load.id, result: entry(token("stored"), 2), at: at(0))) == "discard(nil)")
        #expect(machine.statistics.renewals == 0)
    }

    @Test func aRefusedRenewalAfterLogoutReleasesTheLeaseAndRevokesNothing() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        _ = machine.obtained(id, result: .failure(Self.refused), at: at(591))
        _ = machine.wiped()
        #expect(
            name(machine.entryRead(id, result: entry(token("theirs", refresh: "r9"), 7), at: at(591))) == "releaseLease"
        )
        #expect(name(machine.leaseReleased(id, failed: false, at: at(591))) == "discard(nil)")
    }

    // MARK: Loading

    @Test func aDamagedSharedStoreFailsTheLoadWithItsKind() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        _ = machine.firstStep(of: load.id, at: at(0))
        let damaged = CourierError(kind: .tokenStoreTampered, message: "flipped")
        #expect(name(machine.storeRead(load.id, result: .failure(damaged), at: at(0))) == "fail(tokenStoreTampered)")
        #expect(machine.operation == nil)
    }

    @Test func anUnreachableSharedStoreLoadsNothingAndRenewsAlone() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        _ = machine.firstStep(of: load.id, at: at(0))
        #expect(name(machine.storeRead(load.id, result: .failure(Self.outage), at: at(0))) == "readEntry")
        #expect(name(machine.entryRead(load.id, result: .failure(Self.outage), at: at(0))) == "obtain(nil, noToken)")
        #expect(machine.takeNotes().filter { if case .degraded = $0 { true } else { false } }.count == 1)
        #expect(machine.statistics.localRenewals == 1)
    }

    // MARK: Sign-in

    @Test func aSignInReplacesTheSharedEntryAndGivesUpAfterThreeLostWrites() throws {
        var machine = machine()
        guard case .start(let grant) = machine.grantRequested() else { throw Unexpected() }
        #expect(name(machine.firstStep(of: grant.id, at: at(0))) == "obtain(nil, requested)")
        #expect(name(machine.obtained(grant.id, result: .success(token("signed-in")), at: at(0))) == "readEntry")
        for version: UInt64 in [2, 3, 4] {
            #expect(
                name(machine.entryRead(grant.id, result: entry(token("other"), version), at: at(0)))
                    == "write(signed-in, \(version))"
            )
            let next = machine.written(grant.id, result: .success(nil), at: at(0))
            #expect(name(next) == (version < 4 ? "readEntry" : "resolve(signed-in)"))
        }
        // The token is in service even though the store could not take it.
        #expect(machine.token?.accessToken == "signed-in")
        #expect(machine.takeNotes().contains { if case .writeFailed(false, true, _) = $0 { true } else { false } })
        #expect(machine.statistics.grants == 1)
        #expect(machine.statistics.renewals == 0)
    }

    // MARK: Illegal sequences

    @Test func anEventOutOfOrderFailsTheOperationAndFreesTheLevel() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        _ = machine.firstStep(of: load.id, at: at(0))
        // A lease result while the store is being read: a defect, never a hang.
        #expect(
            name(machine.leaseAcquired(load.id, result: .success(lease()), at: at(0))) == "fail(tokenRefreshFailed)"
        )
        #expect(machine.operation == nil)
        guard case .start(let again, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        #expect(again.id != load.id)
        // An event for an operation that does not exist changes nothing else.
        #expect(name(machine.paused(999)) == "fail(tokenRefreshFailed)")
        #expect(machine.operation?.id == again.id)
    }

    @Test(arguments: ["write", "strategy", "pause"])
    func aResultNobodyAskedForIsRefused(event: String) throws {
        var machine = machine()
        let id = try loadDueToken(&machine)  // the machine waits for an entry read
        let step =
            switch event {
            case "write": machine.written(id, result: .success(nil), at: at(590))
            case "strategy": machine.obtained(id, result: .success(token("late")), at: at(590))
            default: machine.paused(id)
            }
        #expect(name(step) == "fail(tokenRefreshFailed)")
        #expect(machine.operation == nil)
    }

    // MARK: Logout at the edges

    @Test func logoutBeforeTheOperationsFirstStepAsksNobody() throws {
        var machine = machine()
        guard case .start(let load, _) = machine.tokenRequested(now: start) else { throw Unexpected() }
        _ = machine.wiped()
        #expect(name(machine.firstStep(of: load.id, at: at(0))) == "discard(nil)")
        #expect(machine.statistics.loads == 0)
    }

    @Test func logoutDuringALostCompareAndSwapRevokesTheUnstoredToken() throws {
        var machine = machine()
        let id = try loadDueToken(&machine)
        try takeLeaseAndObtain(&machine, id, stored: token("old"), version: 3)
        #expect(name(machine.obtained(id, result: .success(token("mine")), at: at(591))) == "write(mine, 3)")
        _ = machine.wiped()
        // The write lost, so "mine" is nowhere but here: it goes back to the server.
        #expect(name(machine.written(id, result: .success(nil), at: at(591))) == "releaseLease")
        #expect(name(machine.leaseReleased(id, failed: false, at: at(591))) == "discard(mine)")
        #expect(machine.statistics.adoptions == 0)
    }

    @Test func logoutWhileASignInIsWrittenKeepsTheRemoval() throws {
        var machine = machine()
        guard case .start(let grant) = machine.grantRequested() else { throw Unexpected() }
        _ = machine.firstStep(of: grant.id, at: at(0))
        #expect(name(machine.obtained(grant.id, result: .success(token("signed-in")), at: at(0))) == "readEntry")
        _ = machine.wiped()
        // The sign-in's waiters learn of the logout; its token is not written back.
        #expect(name(machine.entryRead(grant.id, result: entry(nil, 9), at: at(0))) == "discard(signed-in)")
        #expect(machine.token == nil)
    }

    // MARK: Sign-in writes

    @Test func aSignInWrittenOnTheFirstTryTakesTheEntrysVersion() throws {
        var machine = machine()
        guard case .start(let grant) = machine.grantRequested() else { throw Unexpected() }
        _ = machine.firstStep(of: grant.id, at: at(0))
        _ = machine.obtained(grant.id, result: .success(token("signed-in")), at: at(0))
        #expect(name(machine.entryRead(grant.id, result: entry(nil, 4), at: at(0))) == "write(signed-in, 4)")
        let written = machine.written(grant.id, result: .success(TokenStoreEntry(token: nil, version: 5)), at: at(0))
        #expect(name(written) == "resolve(signed-in)")
        #expect(machine.sharedVersion == 5)
        #expect(machine.takeNotes().allSatisfy { if case .writeFailed = $0 { false } else { true } })
    }

    @Test(arguments: ["read", "write"])
    func aSignInTheStoreCannotTakeIsStillInService(failing: String) throws {
        var machine = machine()
        guard case .start(let grant) = machine.grantRequested() else { throw Unexpected() }
        _ = machine.firstStep(of: grant.id, at: at(0))
        _ = machine.obtained(grant.id, result: .success(token("signed-in")), at: at(0))
        var step = machine.entryRead(
            grant.id,
            result: failing == "read" ? .failure(Self.outage) : entry(nil, 4),
            at: at(0)
        )
        if failing == "write" { step = machine.written(grant.id, result: .failure(Self.outage), at: at(0)) }
        #expect(name(step) == "resolve(signed-in)")
        #expect(machine.takeNotes().contains { if case .writeFailed(false, true, _) = $0 { true } else { false } })
        guard case .use(let used) = machine.tokenRequested(now: start) else { throw Unexpected() }
        #expect(used.token.accessToken == "signed-in")
    }
}
