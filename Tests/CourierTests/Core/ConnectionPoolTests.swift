import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The transport's pool of idle connections against nginx: connections are reused, not closed
/// and opened again, however the number of transfers in flight rises and falls.
@Suite(.timeLimit(.minutes(2)))
struct ConnectionPoolTests {
    @Test func connectionsOfABusyOriginStayOpenBetweenRequests() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 16, proxy: .none))
        let session = Session(configuration: .init(baseURL: env.url(.http)), transport: transport)
        let run = "pool-\(UUID().uuidString.prefix(8))"
        // Sixteen callers on the global executor, each sending one request after another: the
        // transfers in flight drop to a few and rise again all the time.
        let callers = 16
        let requests = 60
        try await withThrowingTaskGroup(of: Void.self) { group in
            for caller in 0..<callers {
                group.addTask {
                    for index in 0..<requests {
                        let path = "/bytes/1k?\(run)=\(caller)-\(index)"
                        let response = try await session.send(HTTPRequest(method: .get, path: path))
                        #expect(response.status == .ok)
                    }
                }
            }
            try await group.waitForAll()
        }
        let entries = try await TrustRotationSupport.logEntries(env, .http, containing: run, count: callers * requests)
        #expect(entries.count == callers * requests)
        let connections = Set(entries.map(\.connection))
        #expect(connections.count <= callers, "\(connections.count) connections for \(callers) callers")
        await session.shutdown()
        await transport.shutdown()
    }
}
