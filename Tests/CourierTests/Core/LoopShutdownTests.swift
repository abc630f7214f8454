import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Shutting a transport down while requests are in flight from tasks that prefer its loop as
/// their executor: every request ends, the caller of `shutdown()` returns, and tasks that
/// still prefer the stopped loop go on. The suite runs again under ThreadSanitizer, and
/// `scripts/sanitize.sh address` runs it under AddressSanitizer.
@Suite(.timeLimit(.minutes(2)), .serialized)
struct LoopShutdownTests {
    @Test(arguments: 1...3)
    func aThousandRequestsInFlightAllEndAtShutdown(round: Int) async throws {
        let env = try await TestServers.shared()
        // Four connections: 256 transfers hold an easy handle, the rest wait for a slot.
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 4, proxy: .none))
        let session = Session(configuration: .init(baseURL: env.url(.http)), transport: transport)
        let outcomes = await withTaskGroup(of: String.self) { group in
            for _ in 0..<1000 {
                group.addTask(executorPreference: transport.executor) {
                    do {
                        let response = try await session.send(HTTPRequest(method: .get, path: "/stall?seconds=30"))
                        return "answered \(response.statusCode)"
                    } catch let error as CourierError {
                        return "\(error.kind)"
                    } catch {
                        return "\(type(of: error))"
                    }
                }
            }
            // Every request is in the transport, running or queued, before the stop.
            while transport.statistics.activeTransfers + transport.statistics.queuedTransfers < 1000 {
                try? await Task.sleep(for: .milliseconds(5))
            }
            #expect(transport.statistics.queuedTransfers > 0, "round \(round): some wait for a slot")
            // The caller of shutdown() prefers the loop too.
            await withTaskExecutorPreference(transport.executor) { await transport.shutdown() }
            var outcomes: [String: Int] = [:]
            for await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
        #expect(outcomes == ["shutDown": 1000], "round \(round)")
        #expect(transport.statistics.activeTransfers == 0)
        #expect(transport.statistics.queuedTransfers == 0)
        #expect(transport.statistics.easyHandles == 0)

        // A task that still prefers the stopped loop goes on, and its request is refused.
        let later = await Task(executorPreference: transport.executor) { () -> CourierError.Kind? in
            do {
                _ = try await session.send(HTTPRequest(method: .get, path: "/"))
                return nil
            } catch {
                return (error as? CourierError)?.kind
            }
        }.value
        #expect(later == .shutDown)
    }

    @Test func requestsStartedWhileTheLoopStopsEndToo() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(proxy: .none))
        let session = Session(configuration: .init(baseURL: env.url(.http)), transport: transport)
        // Requests keep arriving, from the loop and from the global pool, while it stops.
        let outcomes = await withTaskGroup(of: String.self) { group in
            for index in 0..<400 {
                let preference: (any TaskExecutor)? = index.isMultiple(of: 2) ? transport.executor : nil
                group.addTask(executorPreference: preference) {
                    do {
                        let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
                        return "answered \(response.statusCode)"
                    } catch let error as CourierError {
                        return "\(error.kind)"
                    } catch {
                        return "\(type(of: error))"
                    }
                }
                if index == 200 {
                    group.addTask {
                        await transport.shutdown()
                        return "stopped"
                    }
                }
            }
            var outcomes: [String: Int] = [:]
            for await outcome in group { outcomes[outcome, default: 0] += 1 }
            return outcomes
        }
        // Every request ends, answered or refused by the stop; nothing else.
        #expect(outcomes["stopped"] == 1)
        #expect((outcomes["answered 200"] ?? 0) + (outcomes["shutDown"] ?? 0) == 400, "\(outcomes)")
        #expect(transport.statistics.activeTransfers == 0)
    }
}
