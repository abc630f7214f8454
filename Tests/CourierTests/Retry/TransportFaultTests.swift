import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Connection faults the transport absorbs by itself, with retries off, against the fault
/// server's `/reuse-dies`: every pooled connection dies when it is reused.
@Suite(.timeLimit(.minutes(1)))
struct TransportFaultTests {
    static func session(_ env: TestEnvironment, policy: RetryPolicy = .never) -> Session {
        var configuration = Session.Configuration(baseURL: env.faults)
        configuration.retryPolicy = policy
        return Session(
            configuration: configuration,
            transport: CurlTransport(configuration: .init(maximumConnectionsPerHost: 8, proxy: .none))
        )
    }

    @Test func aGetOnADeadPooledConnectionGoesAgainOnAFreshOne() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env)
        let key = uniqueFaultKey("pool")
        // Eight concurrent GETs: the server sends each head at once and the bodies only when
        // eight have arrived on fresh connections (or after 2 s: libcurl may keep the last
        // one waiting to multiplex on a connection it has), so the pool then holds up to
        // eight connections, each of which dies when reused.
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    let path = "/reuse-dies?key=\(key)&barrier=8&wait=2"
                    return try await session.send(ResourceRequest(path: path)).statusCode
                }
            }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(statuses == Array(repeating: 200, count: 8))
        var dropped = try await env.faultStats(forKey: key).dropped

        for round in 1...20 {
            let response = try await session.send(ResourceRequest(path: "/reuse-dies?key=\(key)"))
            #expect(response.status == .ok, "round \(round)")
            #expect(response.attempts == 1)
            // It met a dead pooled connection first, and the transport sent it again.
            let seen = try await env.faultStats(forKey: key)
            #expect(seen.dropped > dropped, "round \(round)")
            dropped = seen.dropped
        }
        let seen = try await env.faultStats(forKey: key)
        #expect(seen.answered == 28)
        print("reuse-dies: 28 GETs answered, \(seen.dropped) requests met a dead pooled connection first")
        await session.shutdown()
    }

    @Test func aPostOnADeadPooledConnectionFailsAndIsNotSentTwice() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env, policy: .default)
        let key = uniqueFaultKey("post")
        // One GET leaves one connection in the pool; the POST reuses it and it dies.
        #expect(try await session.send(ResourceRequest(path: "/reuse-dies?key=\(key)")).status == .ok)
        let post = ResourceRequest(path: "/reuse-dies?key=\(key)", method: .post, body: .text("pay 10 €"))
        let error = try await #require(throws: CourierError.self) { try await session.send(post) }
        #expect(error.kind == .connectionClosed)
        #expect(error.attempts == 1)
        #expect(error.endpoint == "POST /reuse-dies")
        let seen = try await env.faultStats(forKey: key)
        #expect(seen.methods == ["GET", "POST"])
        #expect(seen.dropped == 1)
        await session.shutdown()
    }
}
