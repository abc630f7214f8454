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

    @Test func oneHTTP2ConnectionCarriesMoreThanAHundredStreams() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(
            configuration: .init(
                maximumConnectionsPerHost: 64,
                proxy: .none,
                trustedCertificateBundlePath: env.caBundle
            )
        )
        let session = Session(configuration: .init(baseURL: env.url(.https)), transport: transport)
        // One request first, so that the rest find an HTTP/2 connection to multiplex on.
        #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .ok)
        let run = "streams-\(UUID().uuidString.prefix(8))"
        // More streams at once than libcurl's default limit of 100, fewer than nginx's 128.
        let streams = 120
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<streams {
                group.addTask {
                    let response = try await session.send(
                        HTTPRequest(method: .get, path: "/httpbin/delay/0.3?\(run)=\(index)")
                    )
                    #expect(response.status == .ok)
                }
            }
            try await group.waitForAll()
        }
        let entries = try await TrustRotationSupport.logEntries(env, .https, containing: run, count: streams)
        #expect(entries.count == streams)
        #expect(entries.allSatisfy { $0.httpProtocol == "HTTP/2.0" })
        let connections = Set(entries.map(\.connection))
        #expect(connections.count == 1, "\(connections.count) connections for \(streams) streams")
        await session.shutdown()
        await transport.shutdown()
    }
}
