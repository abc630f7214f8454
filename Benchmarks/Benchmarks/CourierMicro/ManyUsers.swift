// Many users on one ResourceAccess (`userClient(for:)`): what a user costs, and that the
// token endpoint sees one renewal per user at most.
//
// - `ResourceAccess.users.lookupWarm`: looking up one of 10,000 users in memory.
// - `ResourceAccess.users.memoryPerIdleUser`: the heap (and RSS) that 10,000 warm users take
//   — each with its token loaded by one authenticated request, then idle — divided by 10,000
//   (the heap from glibc's mallinfo2; the RSS figure is rough, as freed pages are reused).
//   The store builds a fresh token for every read, as a file or database store would, and
//   keeps nothing itself, so the figure is what the ResourceAccess holds per user. Throws
//   above 2 KB.
// - `ResourceAccess.users.validTokens10000`: 10,000 users with a valid stored token send one
//   authenticated request each, all at once; throws unless the token endpoint saw none.
// - `ResourceAccess.users.expiring1000`: 1,000 users whose stored tokens have expired send
//   ten requests each, all at once; throws unless the token endpoint saw exactly 1,000
//   refreshes, one per user.
import Benchmark
import CHeapInfo
import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// A user's stored token: valid for an hour, or expired a minute ago; 43 and 48 characters,
/// like the tokens of common authorization servers.
func userToken(_ n: Int, valid: Bool) -> OAuth2Token {
    let suffix = String(n).padding(toLength: 8, withPad: "0", startingAt: 0)
    return OAuth2Token(
        accessToken: "access-token-0123456789abcdefghijklm-" + suffix.prefix(6),
        expiresAt: Date().addingTimeInterval(valid ? 3600 : -60),
        refreshToken: "refresh-token-0123456789abcdefghijklmnopq-" + suffix.prefix(7)
    )
}

/// A store that builds a fresh token for every read, counting the reads, and keeps no write.
final class FreshTokenStore: TokenStore {
    private let readCount = Atomic<Int>(0)

    /// The user tokens read so far.
    var reads: Int { readCount.load(ordering: .relaxed) }

    func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
        guard key.level == .user, let user = key.user, let n = Int(user.dropFirst(8)) else { return nil }
        readCount.add(1, ordering: .relaxed)
        return userToken(n, valid: true)
    }
    func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {}
    func removeTokens(clientID: String) async throws {}
}

/// A secured transport that answers every request at once and records nothing.
struct SecuredNullTransport: Transport {
    let security: SecurityConfiguration
    let response = Response(head: HTTPResponse(status: .ok))

    func execute(
        _ request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl
    ) async throws -> Response {
        response
    }
}

/// A MockTransport whose token endpoint counts its requests and answers, after `delay`, with
/// a new token; the gateway answers 200.
func makeUsersMock(tokenRequests: GrantCounter, delay: Duration? = nil) throws -> MockTransport {
    let ok = Response(head: HTTPResponse(status: .ok))
    return MockTransport(security: try securedConfiguration()) { request, _ in
        guard request.authority == authorizationHost else { return ok }
        let n = tokenRequests.increment()
        if let delay { try await Task.sleep(for: delay) }
        let json = #"{"access_token":"new-\#(n)","token_type":"Bearer","expires_in":3600,"refresh_token":"r-\#(n)"}"#
        return Response(
            head: HTTPResponse(status: .ok, headerFields: [.contentType: "application/json"]),
            body: Response.Body(Data(json.utf8))
        )
    }
}

/// Resource access for many users on `transport` and `store`.
func makeUsersAccess(transport: any Transport, store: any TokenStore) throws -> ResourceAccess {
    var configuration = ResourceAccess.Configuration(
        resourceBaseURL: URL(string: "https://\(resourceHost)/v1")!,
        authorizationServer: AuthorizationServer(baseURL: URL(string: "https://\(authorizationHost)")!),
        transport: .init(),  // not used: the transport is given below
        userClient: OAuth2ClientCredentials(clientID: "bench-user", clientSecret: "s"),
        deviceClient: OAuth2ClientCredentials(clientID: "bench-device"),
        tokenStore: store
    )
    configuration.maximumUsersInMemory = 20_000
    return try ResourceAccess(configuration: configuration, transport: transport)
}

/// The key of user `n`: `account-` and eight digits.
func userKey(_ n: Int) -> String { "account-" + String(format: "%08d", n) }

/// Bytes in use on the heap.
func heapInUse() -> Int { Int(cheapinfo_heap_in_use()) }

/// The resident set, in bytes.
func residentBytes() -> Int {
    guard let statm = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let pages = statm.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// Sends one authenticated request for each of `users` (times `each`) at once.
func sendConcurrently(_ access: ResourceAccess, users: Range<Int>, each: Int = 1) async throws {
    let request = ResourceRequest(path: "/x")
    try await withThrowingTaskGroup(of: Void.self) { group in
        for n in users {
            let key = userKey(n)
            for _ in 0..<each {
                group.addTask { _ = try await access.userClient(for: key).sendAuthenticatedRequest(request) }
            }
        }
        try await group.waitForAll()
    }
}

func registerManyUsersBenchmarks() {
    Benchmark("ResourceAccess.users.lookupWarm") { benchmark in
        let access = try makeUsersAccess(
            transport: SecuredNullTransport(security: try securedConfiguration()),
            store: FreshTokenStore()
        )
        let keys = (0..<10_000).map(userKey)
        for key in keys { blackHole(access.userClient(for: key)) }
        var index = 0
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(access.userClient(for: keys[index]))
            index = index == keys.count - 1 ? 0 : index + 1
        }
        benchmark.stopMeasurement()
        await access.shutdown()
    }

    let heapPerUser = BenchmarkMetric.custom(
        "Heap per idle user (B)",
        polarity: .prefersSmaller,
        useScalingFactor: false
    )
    let residentPerUser = BenchmarkMetric.custom(
        "RSS per idle user (B)",
        polarity: .prefersSmaller,
        useScalingFactor: false
    )
    Benchmark(
        "ResourceAccess.users.memoryPerIdleUser",
        configuration: .init(
            metrics: [heapPerUser, residentPerUser],
            scalingFactor: .one,
            maxDuration: .seconds(10),
            maxIterations: 3
        )
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let store = FreshTokenStore()
            let access = try makeUsersAccess(
                transport: SecuredNullTransport(security: try securedConfiguration()),
                store: store
            )
            let users = 10_000
            let heapBefore = heapInUse()
            let residentBefore = residentBytes()
            // Warm: each user loads its token with one request, in batches so that the
            // requests' own memory is gone before the measurement.
            for batch in stride(from: 0, to: users, by: 1_000) {
                try await sendConcurrently(access, users: batch..<(batch + 1_000))
            }
            let heap = (heapInUse() - heapBefore) / users
            let resident = (residentBytes() - residentBefore) / users
            benchmark.measurement(heapPerUser, heap)
            benchmark.measurement(residentPerUser, resident)
            guard store.reads == users else {
                throw AuthBenchmarkError(description: "\(store.reads) store reads for \(users) users: not one each")
            }
            await access.shutdown()
            guard heap < 2048 else {
                throw AuthBenchmarkError(description: "an idle warm user takes \(heap) bytes of heap, not < 2048")
            }
        }
    }

    Benchmark(
        "ResourceAccess.users.validTokens10000",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal],
            scalingFactor: .one,
            maxDuration: .seconds(10),
            maxIterations: 5
        )
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let tokenRequests = GrantCounter()
            let store = InMemoryTokenStore()
            for n in 0..<10_000 {
                try await store.setToken(
                    userToken(n, valid: true),
                    for: TokenStoreKey(clientID: "bench-user", level: .user, user: userKey(n))
                )
            }
            let access = try makeUsersAccess(transport: try makeUsersMock(tokenRequests: tokenRequests), store: store)
            benchmark.startMeasurement()
            try await sendConcurrently(access, users: 0..<10_000)
            benchmark.stopMeasurement()
            await access.shutdown()
            let count = tokenRequests.calls
            guard count == 0 else {
                throw AuthBenchmarkError(
                    description: "10,000 users with valid tokens caused \(count) token requests, not 0"
                )
            }
        }
    }

    Benchmark(
        "ResourceAccess.users.expiring1000",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal],
            scalingFactor: .one,
            maxDuration: .seconds(10),
            maxIterations: 5
        )
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let tokenRequests = GrantCounter()
            let store = InMemoryTokenStore()
            for n in 0..<1_000 {
                try await store.setToken(
                    userToken(n, valid: false),
                    for: TokenStoreKey(clientID: "bench-user", level: .user, user: userKey(n))
                )
            }
            // Each refresh takes 1 ms, so each user's ten callers pile up behind its one renewal.
            let access = try makeUsersAccess(
                transport: try makeUsersMock(tokenRequests: tokenRequests, delay: .milliseconds(1)),
                store: store
            )
            benchmark.startMeasurement()
            try await sendConcurrently(access, users: 0..<1_000, each: 10)
            benchmark.stopMeasurement()
            await access.shutdown()
            let count = tokenRequests.calls
            guard count == 1_000 else {
                throw AuthBenchmarkError(
                    description: "1,000 users expiring at once caused \(count) refreshes, not 1,000"
                )
            }
        }
    }
}
