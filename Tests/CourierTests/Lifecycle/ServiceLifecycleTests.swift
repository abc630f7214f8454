#if ServiceLifecycle
import CourierServiceLifecycle
import Foundation
import HTTPTypes
import Logging
import ServiceLifecycle
import Testing

@testable import Courier

/// A session as a service of a `ServiceGroup`: on graceful shutdown it refuses new requests
/// at once, lets the requests in flight finish for its grace period, then cancels the rest.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct ServiceLifecycleTests {
    static let logger = Logger(label: "courier.tests.lifecycle", factory: { _ in SwiftLogNoOpLogHandler() })

    @Test func gracefulShutdownEndsEveryRequestInFlight() async throws {
        let env = try await TestServers.shared()
        var configuration = Session.Configuration(baseURL: env.url(.http))
        configuration.retryPolicy = .never
        configuration.shutdownGracePeriod = .seconds(5)
        // Eight connections: eight requests at a time answer within the grace period, the
        // others still wait for a connection when it ends.
        let session = Session(configuration: configuration)
        let transport = try #require(session.transport as? CurlTransport)
        let group = ServiceGroup(services: [session], logger: Self.logger)

        let outcomes = try await withThrowingTaskGroup(of: [String: Int].self) { services in
            services.addTask {
                try await group.run()
                return [:]
            }
            let outcomes = await withTaskGroup(of: String.self) { requests in
                for _ in 0..<500 {
                    requests.addTask {
                        await outcome { try await session.send(HTTPRequest(method: .get, path: "/late?seconds=1")) }
                    }
                }
                // Every request is in the transport, running or waiting, before the trigger.
                for _ in 0..<6000
                where transport.statistics.activeTransfers + transport.statistics.queuedTransfers < 500 {
                    try? await Task.sleep(for: .milliseconds(5))
                }
                #expect(transport.statistics.activeTransfers + transport.statistics.queuedTransfers == 500)
                await group.triggerGracefulShutdown()
                for _ in 0..<6000 where !session.isShutDown { try? await Task.sleep(for: .milliseconds(5)) }

                // A request after the session saw the trigger fails at once.
                let refused = await outcome { try await session.send(HTTPRequest(method: .get, path: "/late")) }
                #expect(refused == "shutDown")

                var outcomes: [String: Int] = [:]
                for await outcome in requests { outcomes[outcome, default: 0] += 1 }
                return outcomes
            }
            _ = try await services.next()  // the group ends once the session has shut down
            return outcomes
        }

        let answered = outcomes["status 200", default: 0]
        let cancelled = outcomes["shutDown", default: 0] + outcomes["CancellationError", default: 0]
        #expect(answered + cancelled == 500, "\(outcomes)")
        #expect(answered > 0, "\(outcomes)")
        #expect(cancelled > 0, "\(outcomes)")
        #expect(transport.statistics.activeTransfers == 0)
        #expect(transport.statistics.queuedTransfers == 0)
        #expect(transport.statistics.easyHandles == 0)
    }

    @Test func aTaskStartedAfterTheTriggerHasFailed() async throws {
        let env = try await TestServers.shared()
        var configuration = Session.Configuration(baseURL: env.url(.http))
        configuration.shutdownGracePeriod = .seconds(1)
        let session = Session(configuration: configuration)
        let group = ServiceGroup(services: [session], logger: Self.logger)
        try await withThrowingTaskGroup(of: Void.self) { services in
            services.addTask { try await group.run() }
            #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/1k")).statusCode == 200)
            await group.triggerGracefulShutdown()
            for _ in 0..<6000 where !session.isShutDown { try? await Task.sleep(for: .milliseconds(5)) }
            let task = session.task(for: HTTPRequest(method: .get, path: "/bytes/1k"))
            let error = await #expect(throws: CourierError.self) { try await task.value }
            #expect(error?.kind == .shutDown)
            try await services.next()
        }
    }
}

/// A ``ResourceAccess`` as a service: graceful shutdown reaches every session of the client
/// at once — requests that answer within the grace period do, the rest are cancelled.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct ResourceAccessServiceTests {
    @Test func gracefulShutdownEndsTheAuthenticatedRequestsInFlight() async throws {
        let env = try await AuthServers.shared()
        var configuration = env.configuration()
        configuration.shutdownGracePeriod = .seconds(5)
        let access = try ResourceAccess(configuration: configuration)
        let transport = try #require(access.transport as? CurlTransport)
        // A token first, so that every request below is in the transport at once.
        let first = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
        #expect(first.statusCode == 200)
        let group = ServiceGroup(services: [access], logger: ServiceLifecycleTests.logger)

        let outcomes = try await withThrowingTaskGroup(of: [String: Int].self) { services in
            services.addTask {
                try await group.run()
                return [:]
            }
            let outcomes = await withTaskGroup(of: String.self) { requests in
                // 20 that answer after a second, then 20 that would take a minute.
                for (seconds, total) in [(1, 20), (60, 40)] {
                    for _ in 0..<20 {
                        requests.addTask {
                            await outcome {
                                try await access.deviceClient.sendAnonymousRequest(
                                    ResourceRequest(path: "/api/device/slow?seconds=\(seconds)")
                                )
                            }
                        }
                    }
                    for _ in 0..<2000 where transport.inFlight < total { try? await Task.sleep(for: .milliseconds(5)) }
                }
                #expect(transport.inFlight == 40)
                let trigger = ContinuousClock.now
                await group.triggerGracefulShutdown()
                for _ in 0..<2000 where !access.deviceClient.resourceSessions.allSatisfy(\.isShutDown) {
                    try? await Task.sleep(for: .milliseconds(5))
                }
                let refused = await outcome {
                    try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
                }
                #expect(refused == "shutDown")

                var outcomes: [String: Int] = [:]
                for await outcome in requests { outcomes[outcome, default: 0] += 1 }
                #expect(ContinuousClock.now - trigger < .seconds(15), "the grace period is 5 s")
                return outcomes
            }
            _ = try await services.next()
            return outcomes
        }

        let cancelled = outcomes["shutDown", default: 0] + outcomes["CancellationError", default: 0]
        #expect(outcomes["status 200"] == 20, "\(outcomes)")
        #expect(cancelled == 20, "\(outcomes)")
        #expect(transport.statistics.activeTransfers == 0)
        #expect(transport.statistics.queuedTransfers == 0)
    }
}

extension CurlTransport {
    /// Transfers running or waiting for a connection.
    fileprivate var inFlight: Int { statistics.activeTransfers + statistics.queuedTransfers }
}
#endif
