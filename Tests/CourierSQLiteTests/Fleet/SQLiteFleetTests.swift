import Courier
import CourierFleet
import CourierSQLite
import Foundation
import Testing

/// Real processes (`CourierSQLiteFleetMember`) sharing one SQLite file against the real
/// authorization server, with tokens that live 2 seconds: the fleet asks for one grant per
/// expiry, not one per process, no request fails, and no rotated refresh token is presented
/// twice.
@Suite(.serialized, .timeLimit(.minutes(4)))
struct SQLiteFleetTests {
    /// Tokens live 2 s and are renewed with 1 s left (the leeway is capped at half the
    /// lifetime): about one grant a second for the whole fleet.
    static let interval = 1.0

    /// A fresh directory with a store file whose key file exists before the members start,
    /// so that they all read the same key.
    static func store() async throws -> (directory: String, path: String) {
        let directory = NSTemporaryDirectory() + "courier-sqlite-fleet-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/fleet.sqlite"
        _ = try await TokenStoreKeyProvider.keyFile(atPath: path + ".key").key()
        return (directory, path)
    }

    /// Starts `count` members on the store.
    static func start(
        _ count: Int,
        servers: FleetServers,
        store: (directory: String, path: String),
        level: String,
        callers: Int,
        seconds: Double,
        extra: [String] = []
    ) throws -> [FleetMember] {
        let arguments =
            ["--level", level, "--callers", "\(callers)", "--seconds", "\(seconds)", "--pause-ms", "4000"] + extra
        var members: [FleetMember] = []
        do {
            for index in 0..<count {
                members.append(
                    try FleetMember(
                        name: "m\(index)",
                        servers: servers,
                        storePath: store.path,
                        arguments: arguments,
                        directory: store.directory
                    )
                )
            }
        } catch {
            for member in members { member.stop() }
            throw error
        }
        return members
    }

    /// The summaries of `members`, once each has exited (killed after `limit`).
    static func summaries(_ members: [FleetMember], within limit: Duration) async throws -> [FleetSummary] {
        var summaries: [FleetSummary] = []
        do {
            for member in members { summaries.append(try await member.summary(within: limit)) }
        } catch {
            for member in members { member.stop() }
            throw error
        }
        return summaries
    }

    /// Runs `count` members on the store until each has printed its summary.
    static func run(
        _ count: Int,
        servers: FleetServers,
        store: (directory: String, path: String),
        level: String,
        callers: Int,
        seconds: Double
    ) async throws -> [FleetSummary] {
        let members = try start(count, servers: servers, store: store, level: level, callers: callers, seconds: seconds)
        return try await summaries(members, within: .seconds(seconds + 60))
    }

    /// The gaps between consecutive token requests, in seconds.
    static func gaps(_ times: [Double]) -> [Double] { zip(times.dropFirst(), times).map { $0 - $1 } }

    static func describe(_ summaries: [FleetSummary]) -> String {
        summaries.map {
            "\($0.member): \($0.requests) requests, \($0.failureCount) failed \($0.failures), \($0.renewals) renewals, "
                + "\($0.adopted) adopted, \($0.leases) leases, \($0.conflicts) conflicts, \($0.degraded) degraded"
        }.joined(separator: "; ")
    }

    /// What every fleet run must show: no failure, one grant per expiry for the whole fleet,
    /// each grant one member's renewal, and the store never given up on.
    static func expectOneGrantPerExpiry(_ summaries: [FleetSummary], times: [Double], seconds: Double) {
        #expect(summaries.allSatisfy { $0.failureCount == 0 })
        #expect(summaries.allSatisfy { $0.requests > 0 })
        #expect(times.count >= Int(seconds / interval / 2), "the tokens expired during the run, so they were renewed")
        #expect(times.count <= Int(seconds / interval * 1.5) + 3)
        #expect(gaps(times).allSatisfy { $0 >= interval * 0.8 }, "token requests at \(times)")
        #expect(summaries.reduce(0) { $0 + $1.renewals } == times.count, "every grant was one member's renewal")
        #expect(summaries.allSatisfy { $0.degraded == 0 && $0.conflicts == 0 })
    }

    @Test(arguments: [(members: 4, callers: 100), (members: 8, callers: 50)])
    func processesRenewTheDeviceTokenOncePerExpiry(fleet: (members: Int, callers: Int)) async throws {
        let servers = try await FleetServers.shared()
        let admin = OAuthAdmin(base: servers.oauth)
        try await admin.setLifetime(seconds: 2)
        let store = try await Self.store()
        let since = try await admin.tokenRequestTimes().now
        let seconds = 12.0
        let summaries = try await Self.run(
            fleet.members,
            servers: servers,
            store: store,
            level: "device",
            callers: fleet.callers,
            seconds: seconds
        )
        let times = try await admin.tokenRequestTimes(since: since).times
        print(
            "[figures] SQLite fleet of \(fleet.members) × \(fleet.callers) callers, device, 2 s tokens, \(seconds) s: "
                + "\(times.count) token requests, smallest gap \(Self.gaps(times).min() ?? 0) s; "
                + Self.describe(summaries)
        )
        Self.expectOneGrantPerExpiry(summaries, times: times, seconds: seconds)
    }

    @Test func eightProcessesShareOneRotatingUserEntryWithoutReuse() async throws {
        let servers = try await FleetServers.shared()
        let admin = OAuthAdmin(base: servers.oauth)
        try await admin.setLifetime(seconds: 2)
        let store = try await Self.store()
        // The user signs in once, through the store; the fleet renews the stored entry from
        // then on, each refresh token used once.
        let options = try FleetOptions(
            arguments: [
                "--oauth", servers.oauthTLS.absoluteString, "--gateway", servers.gatewayTLS.absoluteString,
                "--ca-bundle", servers.caBundle, "--pins", servers.pins.joined(separator: ","), "--store-path",
                store.path,
            ],
            environment: [:]
        )
        let signIn = try ResourceAccess(
            configuration: try FleetLoad.configuration(options, store: SQLiteTokenStore(path: store.path), logger: nil)
        )
        try await signIn.userClient.authenticate(username: "alice", password: "wonderland")
        await signIn.shutdown()
        let reuseBefore = try await admin.stats()["refresh_reuse_detected"] as? Int ?? 0
        let since = try await admin.tokenRequestTimes().now
        let seconds = 12.0
        let summaries = try await Self.run(
            8,
            servers: servers,
            store: store,
            level: "user",
            callers: 50,
            seconds: seconds
        )
        let times = try await admin.tokenRequestTimes(since: since).times
        let reuse = (try await admin.stats()["refresh_reuse_detected"] as? Int ?? 0) - reuseBefore
        print(
            "[figures] SQLite fleet of 8 × 50 callers, user (rotating refresh tokens), 2 s tokens, \(seconds) s: "
                + "\(times.count) token requests, reuse detected \(reuse); \(Self.describe(summaries))"
        )
        #expect(reuse == 0)
        #expect(summaries.allSatisfy { $0.failures["userNotAuthenticated"] == nil })
        Self.expectOneGrantPerExpiry(summaries, times: times, seconds: seconds)
        let stored = try await SQLiteTokenStore(path: store.path).token(
            for: TokenStoreKey(clientID: options.userClientID, level: .user)
        )
        #expect(stored?.refreshToken != nil, "nobody signed the fleet out")
    }

    @Test func whenTheLeaseHolderIsKilledMidRenewalAnotherProcessRenewsOnceItsLeaseTimesOut() async throws {
        let servers = try await FleetServers.shared()
        let admin = OAuthAdmin(base: servers.oauth)
        try await admin.setLifetime(seconds: 2)
        try await admin.setTokenFault("none")
        let store = try await Self.store()
        let members = try Self.start(
            3,
            servers: servers,
            store: store,
            level: "device",
            callers: 20,
            seconds: 12,
            extra: ["--lease-seconds", "3"]
        )
        do {
            // Warmed up: the fleet has a token.
            try await Self.eventually(within: .seconds(30)) { members.contains { $0.events.contains("renewed") } }
            let leasesBefore = members.map { $0.events.filter { $0 == "lease" }.count }
            // The next renewal hangs at the server: whoever takes the lease now holds it.
            try await admin.setTokenFault("slow", delayMilliseconds: 5000)
            var holder: FleetMember?
            try await Self.eventually(within: .seconds(20)) {
                holder = zip(members, leasesBefore).first { $0.events.filter { $0 == "lease" }.count > $1 }?.0
                return holder != nil
            }
            let victim = try #require(holder)
            victim.stop()  // SIGKILL: its lease row stays until it times out
            let killedAt = try await admin.tokenRequestTimes().now
            try await admin.setTokenFault("none")
            let summaries = try await Self.summaries(members.filter { $0 !== victim }, within: .seconds(60))
            let after = try await admin.tokenRequestTimes(since: killedAt).times
            print(
                "[figures] SQLite lease holder \(victim.name) killed mid-renewal: \(after.count) token requests after "
                    + "the kill; survivors: \(Self.describe(summaries))"
            )
            #expect(after.count >= 1, "another process renewed")
            #expect(summaries.allSatisfy { $0.failureCount == 0 })
            #expect(summaries.reduce(0) { $0 + $1.successes } > 0)
        } catch {
            try? await admin.setTokenFault("none")
            for member in members { member.stop() }
            throw error
        }
    }

    /// Waits until `condition` holds, looking every 20 ms, at most `limit`.
    static func eventually(within limit: Duration, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !(await condition()) {
            try #require(ContinuousClock.now < deadline, "the condition did not hold within \(limit)")
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
