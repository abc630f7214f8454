import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The receive buffer size changes with the bodies an origin sends (CurlOriginSlots); a
/// handle that cannot change it (libcurl keeps its buffer after HTTP/2 transfers) must still
/// carry the request.
@Suite(.timeLimit(.minutes(2)))
struct ReceiveBufferTests {
    @Test(arguments: [NginxServer.http, .https])
    func requestsSucceedWhileTheReceiveBufferAdapts(server: NginxServer) async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, server, transport: .init(maximumConnectionsPerHost: 2))
        for (path, size) in [
            ("/bytes/1k", 1024), ("/bytes/1m", 1 << 20), ("/bytes/1m", 1 << 20), ("/bytes/1m", 1 << 20),
            ("/bytes/1k", 1024), ("/bytes/1k", 1024), ("/bytes/1k", 1024), ("/bytes/1k", 1024), ("/bytes/1k", 1024),
        ] {
            try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<4 {
                    group.addTask { try await session.send(HTTPRequest(method: .get, path: path)).data.count }
                }
                for try await count in group { #expect(count == size) }
            }
        }
        await session.shutdown()
    }
}
