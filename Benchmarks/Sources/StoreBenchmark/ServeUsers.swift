import Courier
import CourierSQLite
import CourierTesting
import Foundation
import HTTPTypes
import Synchronization

/// What a process that serves many users at once holds, measured in that process: it opens a
/// store, and for `count` distinct users of the `users` it holds asks
/// `access.userClient(for: user).validToken()` — the stored tokens are valid, so no token
/// request is made — and keeps every client and token until it reports.
///
/// Prints one line: `RESULT users=… served=… baselineKiB=… rssKiB=… peakKiB=… maxrssKiB=… seconds=… requests=…`.
func serveUsers(path: String, users: Int, count: Int, budget: Duration) async throws {
    let clock = ContinuousClock()
    let requests = Atomic<Int>(0)
    // Nothing may reach the network: a request fails the run.
    let pin = try SPKIPin(sha256: [UInt8](repeating: 7, count: 32))
    let security = try SecurityConfiguration.secured(trust: [
        try TrustPolicy(host: "api.example.test", pins: [pin]),
        try TrustPolicy(host: "auth.example.test", pins: [pin]),
    ])
    let transport = MockTransport(security: security) { request, _ in
        requests.add(1, ordering: .relaxed)
        throw BenchmarkFailure(description: "a request was sent: \(request.method) \(request.path ?? "")")
    }
    var configuration = ResourceAccess.Configuration(
        resourceBaseURL: URL(string: "https://api.example.test/v1")!,
        authorizationServer: AuthorizationServer(tokenEndpoint: URL(string: "https://auth.example.test/token")!),
        transport: .init(),  // not used: the transport is given below
        userClient: OAuth2ClientCredentials(clientID: BenchTokens.clientID),
        deviceClient: OAuth2ClientCredentials(clientID: "bench-device"),
        tokenStore: SQLiteTokenStore(path: path)
    )
    configuration.maximumUsersInMemory = count
    let access = try ResourceAccess(configuration: configuration, transport: transport)

    // The users: all of them, or `count` distinct ones drawn at random.
    var generator = SplitMix64(state: 42)
    var chosen: [Int]
    if count >= users {
        chosen = Array(0..<users)
    } else {
        var set = Set<Int>(minimumCapacity: count)
        for _ in 0..<(count * 4) where set.count < count { set.insert(Int.random(in: 0..<users, using: &generator)) }
        chosen = Array(set)
    }
    chosen.shuffle(using: &generator)

    // The baseline: the process with its store open (one user served, then dropped).
    _ = try await access.userClient(for: BenchTokens.user(chosen[0])).validToken()
    let baseline = statusKiB("VmRSS")

    let start = clock.now
    var clients: [UserClient] = []
    var tokens: [OAuth2Token] = []
    clients.reserveCapacity(chosen.count)
    tokens.reserveCapacity(chosen.count)
    for user in chosen {
        guard clock.now - start < budget else { break }
        let client = access.userClient(for: BenchTokens.user(user))
        tokens.append(try await client.validToken())
        clients.append(client)
    }
    let seconds = Latencies.microseconds(clock.now - start) / 1e6

    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    print(
        "RESULT users=\(users) served=\(tokens.count) baselineKiB=\(baseline) rssKiB=\(statusKiB("VmRSS"))"
            + " peakKiB=\(statusKiB("VmHWM")) maxrssKiB=\(usage.ru_maxrss) seconds=\(String(format: "%.1f", seconds))"
            + " requests=\(requests.load(ordering: .relaxed))"
    )
    withExtendedLifetime((clients, tokens, access)) {}
}
