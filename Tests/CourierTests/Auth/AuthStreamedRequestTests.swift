import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The streamed requests of the secured clients against the real authorization server and the
/// introspecting gateway over pinned TLS: the head first, the body with back-pressure, the same
/// token, renewal on a 401 and tagging as the buffered requests. Serialized: the memory
/// measurement must not see other tests, and some tests expire every token at the server.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct AuthStreamedRequestTests {
    let env: AuthEnvironment
    let admin: OAuthAdmin

    init() async throws {
        env = try await AuthServers.shared()
        admin = OAuthAdmin(env)
    }

    func access(_ configure: (inout ResourceAccess.Configuration) -> Void = { _ in }) throws -> ResourceAccess {
        var configuration = env.configuration()
        configure(&configuration)
        return try ResourceAccess(configuration: configuration)
    }

    /// The gateway's download of `bytes` bytes, optionally stopping mid-body.
    static func download(_ bytes: Int, pauseAfter: Int? = nil, pause: Double = 0) -> ResourceRequest {
        var parameters: [String: ParameterValue] = ["bytes": .int(bytes)]
        if let pauseAfter {
            parameters["pause_after"] = .int(pauseAfter)
            parameters["pause"] = .double(pause)
        }
        return ResourceRequest(path: "/api/user/download", parameters: parameters)
    }

    /// The SHA-256 of the gateway's download pattern of `count` bytes: byte i is i % 251.
    static func patternDigest(_ count: Int) -> String {
        var hasher = SHA256()
        // 261 periods of 251 bytes: a block that ends where the pattern starts again.
        let block = Data((0..<(251 * 261)).map { UInt8($0 % 251) })
        var remaining = count
        while remaining > 0 {
            let size = min(block.count, remaining)
            hasher.update(data: block.prefix(size))
            remaining -= size
        }
        return hasher.finalize().hex
    }

    @Test func streamsSixtyFourMiBForAUserWithFlatMemory() async throws {
        let access = try access()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let size = 64 << 20
        // RSS is process-wide: keep the smallest growth of up to three runs, so that other work
        // in the process cannot fail the test. Buffering would add 64 MiB every time.
        var smallestGrowth = Int.max
        for _ in 0..<3 where smallestGrowth >= 24 << 20 {
            let baseline = residentMemoryBytes()
            var peak = baseline
            let response = try await access.userClient.streamAuthenticatedRequest(Self.download(size))
            #expect(response.statusCode == 200)
            #expect(response.body.isStreamed)
            #expect(response.headerFields[HTTPField.Name("X-Courier-User")!] == "alice")
            var hasher = SHA256()
            var received = 0
            var chunks = 0
            for try await chunk in response.body {
                hasher.update(data: chunk)
                received += chunk.count
                chunks += 1
                if chunks % 64 == 0 { peak = max(peak, residentMemoryBytes()) }
                // Slower than the gateway: the stream's buffer fills and the transfer pauses.
                if chunks % 4 == 0 { try await Task.sleep(for: .microseconds(200)) }
            }
            #expect(received == size)
            #expect(hasher.finalize().hex == Self.patternDigest(size))
            smallestGrowth = min(smallestGrowth, peak - baseline)
        }
        #expect(smallestGrowth < 24 << 20, "RSS grew by \(smallestGrowth >> 20) MiB while streaming")
        await access.shutdown()
    }

    @Test func aRejectedTokenIsRenewedAndTheHeadResentBeforeTheBodyStreams() async throws {
        let access = try access()
        let user = access.userClient(for: "u-stream-401")
        try await user.authenticate(username: "bob", password: "builder")
        let first = try await user.streamAuthenticatedRequest(Self.download(1 << 20))
        #expect(first.statusCode == 200)
        _ = try await first.body.collect(upTo: 2 << 20)
        let rejected = try #require(try await user.currentToken())
        try await admin.expireAll()  // the gateway now rejects the token the client still thinks valid

        var received = Data()
        var status = 0
        let delta = try await grantDelta {
            let response = try await user.streamAuthenticatedRequest(Self.download(3 << 20))
            status = response.statusCode
            received = try await response.body.collect(upTo: 4 << 20)
        }
        #expect(status == 200)
        #expect(received.count == 3 << 20)
        #expect(received.sha256Hex == Self.patternDigest(3 << 20))
        #expect(delta == ["refresh_token": 1])
        #expect(await user.broker.statistics.renewals == 1)
        #expect(try await user.currentToken()?.accessToken != rejected.accessToken)
        await access.shutdown()
    }

    @Test func cancellingTheConsumerMidBodyFreesTheTransfer() async throws {
        let access = try access()
        let transport = try #require(access.transport as? CurlTransport)
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        // The gateway sends 256 KiB, then holds the rest for 20 s: the consumer is cancelled
        // while the transfer is open and idle.
        let response = try await access.userClient.streamAuthenticatedRequest(
            Self.download(64 << 20, pauseAfter: 256 << 10, pause: 20)
        )
        #expect(response.statusCode == 200)
        let firstBytes = AsyncStream.makeStream(of: Int.self)
        let consumer = Task {
            var received = 0
            var signalled = false
            for try await chunk in response.body {
                received += chunk.count
                if !signalled, received >= 128 << 10 {
                    signalled = true
                    firstBytes.continuation.yield(received)
                }
            }
            return received
        }
        var events = firstBytes.stream.makeAsyncIterator()
        let before = try #require(await events.next())
        #expect(before <= 256 << 10)  // the gateway holds the rest
        #expect(transport.statistics.activeTransfers == 1)
        consumer.cancel()
        await #expect(throws: CancellationError.self) { try await consumer.value }
        try await waitUntil { transport.statistics.activeTransfers == 0 }
        #expect(transport.statistics.activeTransfers == 0)
        // The user's next request goes out at once on the same client.
        let next = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        #expect(next.statusCode == 200)
        await access.shutdown()
    }

    @Test func everyRequestKindStreams() async throws {
        let access = try access()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let profile = ResourceRequest(path: "/api/user/profile")

        let authenticated = try await access.userClient.streamAuthenticatedRequest(profile)
        #expect(authenticated.body.isStreamed)
        #expect(try json(await authenticated.body.collect(upTo: 1 << 16))["username"] as? String == "alice")

        let implicit = try await access.userClient.streamImplicitRequest(Self.download(100_000))
        #expect(implicit.statusCode == 200)
        #expect(implicit.body.isStreamed)
        #expect(try await implicit.body.collect(upTo: 1 << 20).sha256Hex == Self.patternDigest(100_000))

        let exchanged = try await access.userClient.streamExchangedRequest(
            profile,
            exchange: TokenExchangeRequest(scope: [.read], audience: ["courier-gateway"])
        )
        #expect(exchanged.body.isStreamed)
        #expect(try json(await exchanged.body.collect(upTo: 1 << 16))["username"] as? String == "alice")

        let anonymous = try await access.deviceClient.streamAnonymousRequest(ResourceRequest(path: "/api/device/info"))
        #expect(anonymous.body.isStreamed)
        #expect(
            try json(await anonymous.body.collect(upTo: 1 << 16))["client_id"] as? String
                == AuthEnvironment.deviceClient.clientID
        )

        let unauthenticated = try await access.deviceClient.streamUnauthenticatedRequest(
            ResourceRequest(path: "/api/public/status")
        )
        #expect(unauthenticated.body.isStreamed)
        #expect(try json(await unauthenticated.body.collect(upTo: 1 << 16))["status"] as? String == "ok")
        await access.shutdown()
    }

    @Test func aStreamedHeadIsRetriedAsABufferedOneIs() async throws {
        // The fault server behind TLS (the suite's certificate, so the same pins) answers the
        // first request of the key with 503 and the next with 200.
        let servers = try await TestServers.shared()
        var configuration = env.configuration()
        configuration.resourceBaseURL = servers.faultsTLS
        let access = try ResourceAccess(configuration: configuration)
        let key = "stream-retry-\(UUID().uuidString)"
        let response = try await access.deviceClient.streamUnauthenticatedRequest(
            ResourceRequest(path: "/status/503", parameters: ["fail": .int(1), "key": .string(key)])
        )
        #expect(response.statusCode == 200)
        #expect(response.body.isStreamed)
        #expect(try await response.body.collect(upTo: 1 << 10) == Data("status 200".utf8))
        let seen = try await servers.faultStats(forKey: key)
        #expect(seen.requests == 2)
        #expect(seen.methods == ["GET", "GET"])
        await access.shutdown()
    }

    @Test func aUserWhoIsNotSignedInGetsTheTaggedErrorAndNothingIsSent() async throws {
        let access = try access()
        let stranger = access.userClient(for: "u-never-signed-in")
        let before = try await gatewayRequests()
        do {
            _ = try await stranger.streamAuthenticatedRequest(Self.download(1 << 20))
            Issue.record("a streamed request without a user was sent")
        } catch let error as CourierError {
            #expect(error.kind == .userNotAuthenticated)
            #expect(error.requestKind == .authenticated)
        }
        #expect(try await gatewayRequests() == before)
        await access.shutdown()
    }

    /// How many requests the gateway has answered (its admin counter, over its plain port).
    func gatewayRequests() async throws -> Int {
        let session = Session(
            configuration: .init(baseURL: env.gatewayPlain),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/admin/stats"))
        await session.shutdown()
        return try #require(try json(response.data)["requests_total"] as? Int)
    }

    @Test func theBufferedCapIsTheConfiguredOneAndAStreamIsNotBoundByIt() async throws {
        let access = try access { $0.maximumResponseBodySize = 1 << 20 }
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        await #expect(throws: CourierError(.responseTooLarge)) {
            _ = try await access.userClient.sendAuthenticatedRequest(Self.download(2 << 20))
        }
        let fits = try await access.userClient.sendAuthenticatedRequest(Self.download(1 << 20))
        #expect(fits.data.count == 1 << 20)
        let streamed = try await access.userClient.streamAuthenticatedRequest(Self.download(2 << 20))
        #expect(try await streamed.body.collect(upTo: 4 << 20).sha256Hex == Self.patternDigest(2 << 20))
        await access.shutdown()

        #expect(throws: CourierError(.invalidConfiguration)) {
            _ = try self.access { $0.maximumResponseBodySize = -1 }
        }
    }

    func json(_ data: Data) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    /// The grant counts after `body` minus those before.
    func grantDelta(_ body: () async throws -> Void) async throws -> [String: Int] {
        try await admin.grantDelta(body)
    }
}
