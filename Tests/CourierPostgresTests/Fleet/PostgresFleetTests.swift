#if Postgres
import Courier
import CourierPostgres
import Crypto
import Foundation
import Testing

/// Eight processes of a service share one identity through the PostgreSQL store, 50
/// concurrent callers each, with tokens that live 2 s: the authorization server sees one
/// grant per expiry across the fleet, no request fails, no rotated refresh token is reused,
/// a lease holder killed mid-renewal is replaced once its lease times out, and an outage of
/// the database degrades to local renewal instead of failing requests.
///
/// 50 callers a member, not 100: on a loaded two-core machine the authlib gateway (one
/// introspection per request, in Python) then answers more slowly than a 2 s token lives,
/// and the first burst of requests fails for the server's load, not the fleet's coordination
/// (the grants stay one per expiry).
@Suite(.serialized, .timeLimit(.minutes(3)))
struct PostgresFleetTests {
    @Test func aSharedClientCredentialsTokenIsRenewedOncePerExpiry() async throws {
        let servers = try await PostgresServers.shared()
        let admin = OAuthAdmin(base: try #require(servers.oauth))
        try await admin.setLifetime(seconds: FleetRun.lifetime)
        try await admin.reset()

        let fleet = try FleetRun.start(
            servers: servers,
            postgresPort: servers.port,
            table: StoreFixtures.uniqueTable(),
            level: "device"
        )
        let summaries = try await fleet.summaries(within: .seconds(60))
        let times = try await admin.tokenRequestTimes()
        let stats = try await admin.stats()
        print(
            "[figures] PostgreSQL fleet of 8 × 50 callers, device, 2 s tokens, 10 s: \(times.count) token requests, "
                + "smallest gap \(Self.smallestGap(times)) s; \(FleetRun.describe(summaries))"
        )

        #expect(summaries.allSatisfy { $0.requests > 0 })
        #expect(summaries.map(\.failureCount).reduce(0, +) == 0)
        #expect(times.count >= 3, "the tokens expired during the run, so they were renewed")
        #expect(FleetRun.gapsViolatingOneGrantPerExpiry(times).isEmpty, "token requests at \(times)")
        #expect(summaries.map(\.renewals).reduce(0, +) == times.count, "every grant was one member's renewal")
        #expect(summaries.allSatisfy { $0.degraded == 0 })
        #expect(stats["failed_grants"] as? Int == 0)
    }

    @Test func aSharedUserEntryWithRotatingRefreshTokensIsNeverReused() async throws {
        let servers = try await PostgresServers.shared()
        let admin = OAuthAdmin(base: try #require(servers.oauth))
        try await admin.setLifetime(seconds: FleetRun.lifetime)
        let table = StoreFixtures.uniqueTable()
        let key = SymmetricKey(size: .bits256)
        try await Self.seedUser(servers: servers, admin: admin, table: table, key: key)
        try await admin.reset()

        let fleet = try FleetRun.start(
            servers: servers,
            postgresPort: servers.port,
            table: table,
            level: "user",
            key: key
        )
        let summaries = try await fleet.summaries(within: .seconds(60))
        let stats = try await admin.stats()
        let grants = stats["grants"] as? [String: Any] ?? [:]
        let times = try await admin.tokenRequestTimes()
        print(
            "[figures] PostgreSQL fleet of 8 × 50 callers, user (rotating refresh tokens), 2 s tokens, 10 s: "
                + "\(times.count) token requests, reuse detected \(stats["refresh_reuse_detected"] ?? "?"); "
                + FleetRun.describe(summaries)
        )

        #expect(summaries.map(\.failureCount).reduce(0, +) == 0)
        #expect(stats["refresh_reuse_detected"] as? Int == 0)
        #expect(stats["failed_grants"] as? Int == 0)
        #expect((grants["refresh_token"] as? Int ?? 0) >= 3)
        #expect(FleetRun.gapsViolatingOneGrantPerExpiry(times).isEmpty, "token requests at \(times)")
    }

    @Test func aDatabaseOutageDegradesToLocalRenewal() async throws {
        let shared = try await PostgresServers.shared()
        let database = try await PostgresServers.disposable()
        defer { database.handle.stop() }
        let admin = OAuthAdmin(base: try #require(shared.oauth))
        try await admin.setLifetime(seconds: FleetRun.lifetime)

        let fleet = try FleetRun.start(
            servers: shared,
            postgresPort: database.port,
            table: StoreFixtures.uniqueTable(),
            level: "device",
            // Below the renewal leeway (1 s of a 2 s token): a renewal that first waits this
            // long for the unreachable store still has a valid token to serve meanwhile.
            storeTimeoutMilliseconds: 400
        )
        // The fleet shares its token through the database first …
        try await fleet.waitForEvent("renewed", within: .seconds(30))
        // … then the database goes away, as an operator's fast shutdown takes it.
        try await Self.run(database.stopCommand)
        let summaries = try await fleet.summaries(within: .seconds(60))
        print(
            "[figures] PostgreSQL fleet of 8 × 50 callers, database stopped mid-run: \(FleetRun.describe(summaries))"
        )

        #expect(summaries.map(\.failureCount).reduce(0, +) == 0)
        #expect(summaries.map(\.degraded).reduce(0, +) > 0, "the members renewed on their own")
        #expect(summaries.map(\.warnings).reduce(0, +) > 0, "a warning says the store is gone")
    }

    @Test func whenTheLeaseHolderIsKilledMidRenewalAnotherProcessRenewsAfterTheLeaseTimesOut() async throws {
        let servers = try await PostgresServers.shared()
        let admin = OAuthAdmin(base: try #require(servers.oauth))
        try await admin.setLifetime(seconds: FleetRun.lifetime)
        try await admin.setTokenFault("none")
        let fleet = try FleetRun.start(
            servers: servers,
            postgresPort: servers.port,
            table: StoreFixtures.uniqueTable(),
            level: "device",
            members: 3,
            callers: 20,
            seconds: 12,
            leaseSeconds: 3
        )
        do {
            try await fleet.waitForEvent("renewed", within: .seconds(30))
            let leasesBefore = fleet.members.map { $0.eventCount("lease") }
            // The next renewal hangs at the server: whoever takes the lease now holds it.
            try await admin.setTokenFault("slow", delayMilliseconds: 5000)
            let deadline = ContinuousClock.now + .seconds(20)
            var holder: FleetMember?
            while holder == nil {
                holder = zip(fleet.members, leasesBefore).first { $0.eventCount("lease") > $1 }?.0
                try #require(ContinuousClock.now < deadline, "no member took the lease")
                if holder == nil { try await Task.sleep(for: .milliseconds(20)) }
            }
            let victim = try #require(holder)
            victim.stop()  // SIGKILL: its row lease stays until it times out
            let killedAt = Date().timeIntervalSince1970
            try await admin.setTokenFault("none")

            var summaries: [FleetMemberSummary] = []
            for member in fleet.members where member !== victim {
                summaries.append(try await member.summary(within: .seconds(60)))
            }
            let after = try await admin.tokenRequestTimes().filter { $0 > killedAt }
            print(
                "[figures] PostgreSQL lease holder \(victim.name) killed mid-renewal: \(after.count) token requests "
                    + "after the kill; survivors: \(FleetRun.describe(summaries))"
            )
            #expect(after.count >= 1, "another process renewed")
            #expect(summaries.map(\.failureCount).reduce(0, +) == 0)
            #expect(summaries.map(\.successes).reduce(0, +) > 0)
        } catch {
            try? await admin.setTokenFault("none")
            for member in fleet.members { member.stop() }
            throw error
        }
    }

    /// A user's first token, from a password grant, written where the fleet's brokers look.
    private static func seedUser(
        servers: PostgresServers,
        admin: OAuthAdmin,
        table: String,
        key: SymmetricKey
    ) async throws {
        let token = try await admin.passwordGrant(username: "alice", password: "wonderland")
        try await StoreFixtures.withStore(servers, table: table, key: key) { store in
            let entry = TokenStoreKey(clientID: "courier-user", level: .user)
            _ = try #require(try await store.setToken(token, for: entry, ifVersion: 0))
        }
    }

    private static func smallestGap(_ times: [Double]) -> Double {
        let sorted = times.sorted()
        return zip(sorted, sorted.dropFirst()).map { $1 - $0 }.min() ?? 0
    }

    /// Runs a command to its end (bounded) and fails when it fails.
    private static func run(_ command: [String]) async throws {
        guard let executable = command.first else { throw ServersError("no stop command") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable.hasPrefix("/") ? executable : "/usr/bin/env")
        process.arguments = executable.hasPrefix("/") ? Array(command.dropFirst()) : command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = ContinuousClock.now + .seconds(30)
        while process.isRunning, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(20)) }
        guard !process.isRunning, process.terminationStatus == 0 else {
            throw ServersError("\(command.joined(separator: " ")) failed")
        }
    }
}
#endif
