import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Transfers beyond two per allowed connection (64 at an origin that answered over HTTP/2) wait
/// in their origin's queue without an easy handle (CurlOriginSlots); they start in order, can be
/// cancelled, and time out there. The tests over HTTP/1.1 allow 32 connections: 64 transfers
/// hold a handle.
@Suite(.timeLimit(.minutes(2)))
struct OriginQueueTests {
    private func sendAll(_ session: Session, _ path: String, count: Int) -> Task<[Result<Int, any Error>], Never> {
        Task {
            await withTaskGroup(of: Result<Int, any Error>.self) { group in
                for _ in 0..<count {
                    group.addTask {
                        do {
                            return .success(try await session.send(HTTPRequest(method: .get, path: path)).data.count)
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                return await group.reduce(into: []) { $0.append($1) }
            }
        }
    }

    @Test func transfersBeyondTheLimitWaitWithoutAnEasyHandleAndCancel() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 32, proxy: .none))
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        let requests = sendAll(session, "/stall?seconds=30", count: 150)
        try await waitUntil(timeout: .seconds(20)) { transport.statistics.queuedTransfers == 86 }
        #expect(transport.statistics.activeTransfers == 64)
        #expect(transport.statistics.queuedTransfers == 86)
        #expect(transport.statistics.easyHandles == 64)

        let start = ContinuousClock.now
        requests.cancel()
        let results = await requests.value
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(results.count == 150)
        #expect(results.allSatisfy { if case .failure(let error) = $0 { error is CancellationError } else { false } })
        #expect(transport.statistics.queuedTransfers == 0)
        #expect(transport.statistics.activeTransfers == 0)
        await session.shutdown()
    }

    @Test func everyQueuedTransferCompletes() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 32, proxy: .none))
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        let results = await sendAll(session, "/bytes/1k", count: 500).value
        #expect(results.count == 500)
        #expect(results.allSatisfy { (try? $0.get()) == 1024 })
        #expect(transport.statistics.queuedTransfers == 0)
        #expect(transport.statistics.easyHandles <= 64)
        await session.shutdown()
    }

    @Test func cancellingMostOfTheQueueKeepsTheRestInOrder() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 32, proxy: .none))
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        let blockers = sendAll(session, "/stall?seconds=30", count: 64)
        try await waitUntil(timeout: .seconds(20)) { transport.statistics.activeTransfers == 64 }
        let doomed = sendAll(session, "/bytes/1k", count: 200)
        try await waitUntil(timeout: .seconds(20)) { transport.statistics.queuedTransfers == 200 }
        let survivors = sendAll(session, "/bytes/1k", count: 100)
        try await waitUntil(timeout: .seconds(20)) { transport.statistics.queuedTransfers == 300 }

        doomed.cancel()  // 200 of 300 waiting entries leave: the queue is compacted
        let cancelled = await doomed.value
        #expect(cancelled.allSatisfy { if case .failure(let error) = $0 { error is CancellationError } else { false } })
        #expect(transport.statistics.queuedTransfers == 100)

        blockers.cancel()
        _ = await blockers.value
        let results = await survivors.value
        #expect(results.count == 100)
        #expect(results.allSatisfy { (try? $0.get()) == 1024 })
        #expect(transport.statistics.queuedTransfers == 0)
        await session.shutdown()
    }

    @Test func timeInTheQueueCountsTowardsTheTimeout() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 32, proxy: .none))
        let patient = Session(configuration: .init(baseURL: env.nginxHTTP, timeout: nil), transport: transport)
        let hurried = Session(
            configuration: .init(baseURL: env.nginxHTTP, timeout: .milliseconds(500)),
            transport: transport
        )
        let blockers = sendAll(patient, "/stall?seconds=30", count: 64)
        try await waitUntil(timeout: .seconds(20)) { transport.statistics.activeTransfers == 64 }

        let start = ContinuousClock.now
        let error = await #expect(throws: CourierError.self) {
            try await hurried.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        }
        #expect(error?.kind == .timedOut)
        #expect(ContinuousClock.now - start < .seconds(3))
        #expect(transport.statistics.queuedTransfers == 0)

        blockers.cancel()
        _ = await blockers.value
        await patient.shutdown()
        await hurried.shutdown()
        await transport.shutdown()
    }
    @Test func anHTTP1OriginGivesTwoTransfersPerConnectionAHandle() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 1, proxy: .none))
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/1k")).data.count == 1024)
        let requests = sendAll(session, "/stall?seconds=30", count: 50)
        try await waitUntil(timeout: .seconds(20)) { transport.statistics.queuedTransfers == 48 }
        #expect(transport.statistics.activeTransfers == 2)
        #expect(transport.statistics.easyHandles == 2)
        requests.cancel()
        let results = await requests.value
        #expect(results.allSatisfy { if case .failure(let error) = $0 { error is CancellationError } else { false } })
        #expect(transport.statistics.queuedTransfers == 0)
        await session.shutdown()
        await transport.shutdown()
    }

    /// An HTTPS origin may negotiate HTTP/2: until a response tells, it gets the 64 slots of a
    /// multiplexed connection, and keeps them once HTTP/2 is seen; one that answers over
    /// HTTP/1.1 drops to two per connection.
    @Test func anHTTPSOriginKeepsSixtyFourTransfersPerConnectionOverHTTP2Only() async throws {
        let env = try await TestServers.shared()
        for allowsHTTP2 in [true, false] {
            let transport = CurlTransport(
                configuration: .init(
                    maximumConnectionsPerHost: 1,
                    proxy: .none,
                    trustedCertificateBundlePath: env.caBundle,
                    allowsHTTP2: allowsHTTP2
                )
            )
            let session = Session(configuration: .init(baseURL: env.nginxHTTPS), transport: transport)
            let cold = sendAll(session, "/stall?seconds=30", count: 100)
            try await waitUntil(timeout: .seconds(20)) { transport.statistics.queuedTransfers == 36 }
            #expect(transport.statistics.activeTransfers == 64)
            cold.cancel()
            _ = await cold.value

            let probe = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
            #expect(probe.metrics?.httpVersion == (allowsHTTP2 ? .http2 : .http1_1))
            let attached = allowsHTTP2 ? 64 : 2
            let warm = sendAll(session, "/stall?seconds=30", count: 100)
            try await waitUntil(timeout: .seconds(20)) { transport.statistics.queuedTransfers == 100 - attached }
            #expect(transport.statistics.activeTransfers == attached)
            warm.cancel()
            _ = await warm.value
            #expect(transport.statistics.queuedTransfers == 0)
            await session.shutdown()
            await transport.shutdown()
        }
    }
}
