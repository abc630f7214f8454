#if Postgres
import Crypto
import Foundation

/// Eight (or N) member processes sharing one PostgreSQL token store, started together.
struct FleetRun {
    /// Token lifetime the authorization server gives during a fleet test, seconds.
    static let lifetime = 2
    /// How often the fleet renews: with 1 s left, as the renewal leeway is capped at half the
    /// lifetime.
    static let renewalInterval = 1.0

    let members: [FleetMember]

    /// Starts the members against `servers`' TLS front and the PostgreSQL on `postgresPort`.
    static func start(
        servers: PostgresServers,
        postgresPort: Int,
        table: String,
        level: String,
        key: SymmetricKey = SymmetricKey(size: .bits256),
        members count: Int = 8,
        callers: Int = 50,
        seconds: Int = 10,
        leaseSeconds: Int = 5,
        storeTimeoutMilliseconds: Int = 3000
    ) throws -> FleetRun {
        guard let oauth = servers.oauthTLS, let gateway = servers.gatewayTLS else {
            throw ServersError("the OAuth2 servers behind TLS did not start")
        }
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-fleet-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let arguments = [
            "--oauth", oauth.absoluteString, "--gateway", gateway.absoluteString,
            "--ca-bundle", servers.caBundle, "--pins", servers.pins.joined(separator: ","),
            "--store", "postgres", "--store-path", "-", "--level", level,
            "--callers", "\(callers)", "--seconds", "\(seconds)", "--pause-ms", "4000", "--lease-seconds",
            "\(leaseSeconds)",
        ]
        let environment = [
            "COURIER_TOKEN_STORE_KEY": key.withUnsafeBytes { Data($0) }.base64EncodedString(),
            "COURIER_FLEET_POSTGRES_HOST": servers.host,
            "COURIER_FLEET_POSTGRES_PORT": "\(postgresPort)",
            "COURIER_FLEET_POSTGRES_USER": servers.username,
            "COURIER_FLEET_POSTGRES_DATABASE": servers.database,
            "COURIER_FLEET_POSTGRES_TABLE": table,
            "COURIER_FLEET_POSTGRES_TIMEOUT_MS": "\(storeTimeoutMilliseconds)",
        ]
        var members: [FleetMember] = []
        do {
            for index in 0..<count {
                members.append(
                    try FleetMember.launch(
                        name: "m\(index)",
                        arguments: arguments,
                        environment: environment,
                        directory: directory
                    )
                )
            }
        } catch {
            for member in members { member.stop() }
            throw error
        }
        return FleetRun(members: members)
    }

    /// Waits, bounded, until some member logged `event` (a token event such as `renewed`).
    func waitForEvent(_ event: String, within limit: Duration) async throws {
        let deadline = ContinuousClock.now + limit
        while !members.contains(where: { $0.errorOutput.contains("\"event\":\"\(event)\"") }) {
            guard ContinuousClock.now < deadline else {
                throw ServersError("no member logged \(event) within \(limit)")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
    }

    /// The summaries of all members, once they have exited.
    func summaries(within limit: Duration) async throws -> [FleetMemberSummary] {
        var summaries: [FleetMemberSummary] = []
        do {
            for member in members { summaries.append(try await member.summary(within: limit)) }
        } catch {
            for member in members { member.stop() }
            throw error
        }
        return summaries
    }

    /// The gaps between token requests shorter than half the renewal interval: a fleet that
    /// renews once per expiry has none; one that renews once per member has many.
    static func gapsViolatingOneGrantPerExpiry(_ times: [Double]) -> [Double] {
        let sorted = times.sorted()
        return zip(sorted, sorted.dropFirst()).map { $1 - $0 }.filter { $0 < renewalInterval / 2 }
    }

    /// One line per member, for the test's output.
    static func describe(_ summaries: [FleetMemberSummary]) -> String {
        summaries.map {
            "\($0.member): \($0.requests) requests, \($0.failureCount) failed \($0.failures), \($0.renewals) renewals, "
                + "\($0.adopted) adopted, \($0.leases) leases, \($0.conflicts) conflicts, \($0.degraded) degraded"
        }.joined(separator: "; ")
    }
}
#endif
