import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import Courier
@testable import CourierFleet

/// Processes that share one EncryptedFileTokenStore, against the real authorization server:
/// CourierFleetMember executables, each with its own broker and many callers. The server's
/// token request log shows whether the fleet renewed once per expiry or once per process.
/// Part of the serialized integration suite (the token lifetime and fault are server-wide).
extension AuthIntegrationTests {
    /// A fresh directory with a store whose key file exists (created once, before the members
    /// start, so that they all read the same key).
    func fleetStore() async throws -> (directory: String, path: String) {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-fleet-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/fleet.store"
        try await EncryptedFileTokenStore(path: path).removeTokens(clientID: "nobody")
        return (directory, path)
    }

    /// Starts `count` members on the store.
    func startFleet(
        _ count: Int,
        store: (directory: String, path: String),
        level: String,
        callers: Int,
        seconds: Double,
        pauseMilliseconds: Int = 4000,
        extra: [String] = []
    ) throws -> [FleetMember] {
        let executable = try FleetMember.executable()
        let arguments =
            FleetMember.serverArguments(env) + [
                "--store", "file", "--store-path", store.path, "--level", level, "--callers", "\(callers)",
                "--seconds", "\(seconds)", "--pause-ms", "\(pauseMilliseconds)",
            ] + extra
        return try (0..<count).map {
            try FleetMember(name: "m\($0)", executable: executable, arguments: arguments, directory: store.directory)
        }
    }

    /// The gaps between consecutive token requests, in seconds.
    static func gaps(_ times: [Double]) -> [Double] {
        zip(times.dropFirst(), times).map { $0 - $1 }
    }

    static func describe(_ summaries: [FleetSummary]) -> String {
        summaries.map {
            "\($0.member): \($0.requests) requests, \($0.failureCount) failed \($0.failures), \($0.renewals) renewals, "
                + "\($0.adopted) adopted, \($0.leases) leases, \($0.conflicts) conflicts, \($0.degraded) degraded"
        }.joined(separator: "; ")
    }

    @Test func fourProcessesRenewTheDeviceTokenOncePerExpiry() async throws {
        try await withFaultsReset {
            try await admin.setLifetime(2)
            let store = try await fleetStore()
            let since = try await admin.tokenRequestTimes().now
            let seconds = 15.0
            let members = try startFleet(4, store: store, level: "device", callers: 100, seconds: seconds)
            var summaries: [FleetSummary] = []
            for member in members { summaries.append(try await member.summary(within: .seconds(seconds + 45))) }
            let times = try await admin.tokenRequestTimes(since: since).times
            let gaps = Self.gaps(times)
            // 2 s tokens are renewed with 1 s left (the leeway is capped at half the lifetime):
            // about one grant a second for the whole fleet.
            let interval = 1.0
            print(
                "[figures] fleet of 4 × 100 callers, device, 2 s tokens, \(seconds) s: \(times.count) token requests, "
                    + "smallest gap \(gaps.min() ?? 0) s; \(Self.describe(summaries))"
            )
            #expect(summaries.allSatisfy { $0.failureCount == 0 })
            #expect(summaries.reduce(0) { $0 + $1.successes } > 100)
            #expect(times.count >= Int(seconds / interval / 2))
            #expect(times.count <= Int(seconds / interval * 1.5) + 3)
            #expect(gaps.allSatisfy { $0 >= interval * 0.8 })
            #expect(summaries.reduce(0) { $0 + $1.renewals } == times.count)
            #expect(summaries.allSatisfy { $0.degraded == 0 && $0.conflicts == 0 })
        }
    }

    @Test func fourProcessesShareOneRotatingUserEntryWithoutReuse() async throws {
        try await withFaultsReset {
            try await admin.setLifetime(2)
            let store = try await fleetStore()
            // The user signs in once; the fleet renews the stored entry from then on.
            let signIn = try access { $0.tokenStore = EncryptedFileTokenStore(path: store.path) }
            try await signIn.userClient.authenticate(username: "alice", password: "wonderland")
            await signIn.shutdown()
            let reuseBefore = try await admin.stats()["refresh_reuse_detected"] as? Int ?? 0
            let since = try await admin.tokenRequestTimes().now
            let seconds = 12.0
            let members = try startFleet(4, store: store, level: "user", callers: 100, seconds: seconds)
            var summaries: [FleetSummary] = []
            for member in members { summaries.append(try await member.summary(within: .seconds(seconds + 45))) }
            let times = try await admin.tokenRequestTimes(since: since).times
            let reuse = (try await admin.stats()["refresh_reuse_detected"] as? Int ?? 0) - reuseBefore
            print(
                "[figures] fleet of 4 × 100 callers, user (rotating refresh tokens), 2 s tokens, \(seconds) s: "
                    + "\(times.count) token requests, reuse detected \(reuse); \(Self.describe(summaries))"
            )
            #expect(reuse == 0)
            #expect(summaries.allSatisfy { $0.failureCount == 0 })
            #expect(summaries.allSatisfy { $0.failures["userNotAuthenticated"] == nil })
            #expect(times.count <= Int(seconds * 1.5) + 3)
            #expect(Self.gaps(times).allSatisfy { $0 >= 0.8 })
            let stored = try await EncryptedFileTokenStore(path: store.path).token(
                for: TokenStoreKey(clientID: AuthEnvironment.userClient.clientID, level: .user)
            )
            #expect(stored?.refreshToken != nil)  // nobody signed the fleet out
        }
    }

    @Test func twoProcessesWithOneDPoPKeyAndOneCertificateShareTheirBoundToken() async throws {
        try await withFaultsReset {
            let store = try await fleetStore()
            let key = P256.Signing.PrivateKey()
            let keyFile = store.directory + "/dpop-key.pem"
            try key.pemRepresentation.write(toFile: keyFile, atomically: true, encoding: .utf8)
            let servers = try await TestServers.shared()
            let certificate = try TrustRotationSupport.clientCertificate(servers, name: "courier-fleet", days: 2)
            let gateway = Session(
                configuration: .init(baseURL: env.gatewayPlain),
                transport: CurlTransport(configuration: .init(proxy: .none))
            )
            func gatewayCount(_ path: String, _ name: String) async throws -> Int {
                let response = try await gateway.send(HTTPRequest(method: .get, path: path))
                let object = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
                return object?[name] as? Int ?? 0
            }
            let proofsBefore = try await gatewayCount("/admin/dpop", "proofs_accepted")
            let refusalsBefore = try await gatewayCount("/admin/stats", "certificate_refusals")
            var summaries: [FleetSummary] = []
            let delta = try await admin.grantDelta {
                let members = try startFleet(
                    2,
                    store: store,
                    level: "device",
                    callers: 20,
                    seconds: 4,
                    pauseMilliseconds: 200,
                    extra: [
                        "--dpop-key-file", keyFile, "--client-certificate", certificate.certificateFile,
                        "--client-key", certificate.privateKeyFile,
                    ]
                )
                for member in members { summaries.append(try await member.summary(within: .seconds(50))) }
            }
            // One token for the fleet: whichever process got it, the other proved possession of
            // the same key over a connection with the same certificate.
            #expect(delta == ["client_credentials": 1], "\(Self.describe(summaries))")
            #expect(summaries.allSatisfy { $0.failureCount == 0 && $0.successes > 0 }, "\(Self.describe(summaries))")
            let successes = summaries.reduce(0) { $0 + $1.successes }
            #expect(try await gatewayCount("/admin/dpop", "proofs_accepted") - proofsBefore == successes)
            #expect(try await gatewayCount("/admin/stats", "certificate_refusals") == refusalsBefore)
            let stored = try #require(
                try await EncryptedFileTokenStore(path: store.path).token(
                    for: TokenStoreKey(clientID: AuthEnvironment.deviceClient.clientID, level: .device)
                )
            )
            #expect(stored.keyThumbprint == DPoPKey(privateKey: key).thumbprint)
            #expect(stored.certificateThumbprint != nil)
            await gateway.shutdown()
        }
    }

    @Test func whenTheLeaseHolderIsKilledMidRenewalAnotherProcessRenews() async throws {
        try await withFaultsReset {
            try await admin.setLifetime(2)
            let store = try await fleetStore()
            let members = try startFleet(
                3,
                store: store,
                level: "device",
                callers: 20,
                seconds: 10,
                extra: ["--lease-seconds", "3"]
            )
            // Warmed up: the fleet has a token.
            try await eventually(within: .seconds(20)) { members.contains { $0.events.contains("renewed") } }
            let leasesBefore = members.map { $0.events.filter { $0 == "lease" }.count }
            try await admin.setTokenFault("slow", delayMilliseconds: 5000)
            // The next renewal hangs at the server: whoever takes the lease now holds it.
            var holder: FleetMember?
            try await eventually(within: .seconds(20)) {
                holder = zip(members, leasesBefore).first { $0.events.filter { $0 == "lease" }.count > $1 }?.0
                return holder != nil
            }
            let victim = try #require(holder)
            victim.kill()
            let killedAt = try await admin.tokenRequestTimes().now
            try await admin.setTokenFault("none")

            let survivors = members.filter { $0 !== victim }
            var summaries: [FleetSummary] = []
            for member in survivors { summaries.append(try await member.summary(within: .seconds(60))) }
            let after = try await admin.tokenRequestTimes(since: killedAt).times
            print(
                "[figures] lease holder \(victim.name) killed mid-renewal: \(after.count) token requests after the "
                    + "kill; survivors: \(Self.describe(summaries))"
            )
            #expect(after.count >= 1)  // another process renewed
            #expect(summaries.allSatisfy { $0.failureCount == 0 })
            #expect(summaries.reduce(0) { $0 + $1.successes } > 0)
        }
    }

    /// Waits until `condition` holds, looking every 20 ms, at most `limit`.
    func eventually(within limit: Duration, _ condition: () async -> Bool) async throws {
        let deadline = ContinuousClock.now + limit
        while !(await condition()) {
            try #require(ContinuousClock.now < deadline, "the condition did not hold within \(limit)")
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
