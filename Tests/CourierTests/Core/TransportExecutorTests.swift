import CourierTesting
import Dispatch
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// `Session.withTransportExecutor`: requests sent from the transport's own thread work over
/// HTTP/1.1 and HTTP/2, cancel as anywhere else, and a caller that blocks that thread for a
/// while delays the transport's transfers without losing any.
@Suite(.timeLimit(.minutes(1)))
struct TransportExecutorTests {
    @Test(arguments: [(NginxServer.http, Response.Metrics.HTTPVersion.http1_1), (.https, .http2)])
    func requestsInsideRunOnTheTransportThread(
        server: NginxServer,
        version: Response.Metrics.HTTPVersion
    )
        async throws
    {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, server)
        let loop = try #require(session.transport as? CurlTransport).loop
        let file = env.file("1k")
        let results = try await session.withTransportExecutor {
            #expect(loop.isCurrent)
            var results: [(Data, Response.Metrics.HTTPVersion?)] = []
            for _ in 0..<5 {
                let response = try await session.send(HTTPRequest(method: .get, path: file.urlPath))
                #expect(loop.isCurrent)
                results.append((response.data, response.metrics?.httpVersion))
            }
            // Child tasks inherit the preference.
            try await withThrowingTaskGroup(of: Data.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        #expect(loop.isCurrent)
                        return try await session.send(HTTPRequest(method: .get, path: file.urlPath)).data
                    }
                }
                for try await data in group { results.append((data, version)) }
            }
            return results
        }
        #expect(results.count == 13)
        for (data, receivedVersion) in results {
            #expect(data.sha256Hex == file.sha256)
            #expect(receivedVersion == version)
        }
        await session.shutdown()
    }

    @Test func cancellingARequestInsideEndsIt() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env)
        let transport = try #require(session.transport as? CurlTransport)
        let outcome = await session.withTransportExecutor {
            await withTaskGroup(of: String.self) { group in
                group.addTask {
                    #expect(transport.loop.isCurrent)
                    do {
                        _ = try await session.send(HTTPRequest(method: .get, path: "/stall?seconds=30"))
                        return "answered"
                    } catch is CancellationError {
                        return "cancelled"
                    } catch {
                        return "\(error)"
                    }
                }
                // The request is in the transport before it is cancelled.
                var polls = 0
                while transport.statistics.activeTransfers == 0, polls < 2000 {
                    try? await Task.sleep(for: .milliseconds(5))
                    polls += 1
                }
                group.cancelAll()
                return await group.next() ?? "no outcome"
            }
        }
        #expect(outcome == "cancelled")
        // The transport goes on serving.
        let after = try await session.withTransportExecutor {
            try await session.send(HTTPRequest(method: .get, path: "/")).status
        }
        #expect(after == .ok)
        #expect(transport.statistics.activeTransfers == 0)
        await session.shutdown()
    }

    @Test func blockingTheTransportThreadDelaysItsTransfersWithoutLosingThem() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env)
        let loop = try #require(session.transport as? CurlTransport).loop
        let other = SessionFactory.session(env)
        let file = env.file("1k")
        let release = DispatchSemaphore(value: 0)
        let blocked = DispatchSemaphore(value: 0)

        // While the transport's thread is blocked, another transport's requests go on; their
        // completion lifts the block.
        let releaser = Task.detached {
            Self.wait(for: blocked)
            let status = try await other.send(HTTPRequest(method: .get, path: file.urlPath)).status
            release.signal()
            return status
        }
        let pending = Task { try await session.send(HTTPRequest(method: .get, path: file.urlPath)).data }
        let statusInside = try await session.withTransportExecutor {
            #expect(loop.isCurrent)
            Self.block(signalling: blocked, until: release)
            return try await session.send(HTTPRequest(method: .get, path: file.urlPath)).status
        }
        #expect(try await releaser.value == .ok)
        #expect(statusInside == .ok)
        #expect(try await pending.value.sha256Hex == file.sha256)
        await session.shutdown()
        await other.shutdown()
    }

    @Test func aTransportWithoutAThreadSimplyRunsTheBody() async throws {
        let session = Session(configuration: .init(), transport: MockTransport(responses: []))
        let value = await session.withTransportExecutor { 42 }
        #expect(value == 42)
        await session.shutdown()
    }

    private static func wait(for semaphore: DispatchSemaphore) {
        semaphore.wait()
    }

    /// Blocks the calling thread, as a careless caller would.
    private static func block(signalling blocked: DispatchSemaphore, until release: DispatchSemaphore) {
        blocked.signal()
        release.wait()
    }
}
