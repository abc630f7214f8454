import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Observable tasks: suspend, resume, cancel, and Swift task cancellation.
@Suite(.timeLimit(.minutes(2)))
struct NetworkTaskTests {
    @Test func suspendStopsBytesAndResumeCompletes() async throws {
        let env = try await TestServers.shared()
        let file = env.file("slow")
        let session = SessionFactory.session(env, .http)
        let task = session.task(for: HTTPRequest(method: .get, path: file.urlPath))
        let received = ProgressRecorder()
        let watcher = Task {
            for await event in task.events {
                if case .downloadProgress(let progress) = event { received.record(progress.completedBytes) }
            }
        }
        try await waitUntil(timeout: .seconds(10)) { received.latest > 0 }
        #expect(received.latest > 0)
        task.suspend()
        #expect(task.state == .suspended)
        // Let in-flight callbacks settle, then watch for a second: no bytes may move.
        try await Task.sleep(for: .milliseconds(300))
        let atSuspend = received.latest
        try await Task.sleep(for: .seconds(1))
        #expect(received.latest == atSuspend)
        task.resume()
        #expect(task.state == .running)
        let response = try await task.value
        #expect(response.data.count == file.size)
        #expect(task.state == .completed)
        await watcher.value
        await session.shutdown()
    }

    @Test func theTaskKeepsItsLatestProgress() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let task = session.task(for: HTTPRequest(method: .get, path: "/bytes/1m"))
        #expect(task.uploadProgress == nil)
        _ = try await task.value
        try await waitUntil(timeout: .seconds(5)) { task.downloadProgress?.completedBytes == 1 << 20 }
        #expect(task.downloadProgress?.completedBytes == 1 << 20)
        #expect(task.downloadProgress?.fractionCompleted == 1)
        await session.shutdown()
    }

    @Test func aShortChunkedBodyStillReportsItsLastProgress() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let task = session.task(for: HTTPRequest(method: .get, path: "/stream-bytes/100?chunk_size=10"))
        let response = try await task.value
        #expect(response.data.count == 100)
        try await waitUntil(timeout: .seconds(5)) { task.downloadProgress != nil }
        #expect(task.downloadProgress?.completedBytes == Int64(response.metrics?.bytesReceived ?? -1))
        #expect(task.downloadProgress?.fractionCompleted == 1)
        await session.shutdown()
    }

    @Test func cancelEndsTheTaskAsCancelled() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let task = session.task(for: HTTPRequest(method: .get, path: "/stall?seconds=20"))
        #expect(session.activeTasks.contains { $0.id == task.id })
        try await Task.sleep(for: .milliseconds(100))
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(task.state == .cancelled)
        #expect(task.error is CancellationError)
        #expect(task.response == nil)
        try await waitUntil { session.activeTasks.isEmpty }
        #expect(session.activeTasks.isEmpty)
        await session.shutdown()
    }

    @Test func cancellingTheAwaitingSwiftTaskCancelsTheTransfer() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(proxy: .none))
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        let caller = Task { try await session.send(HTTPRequest(method: .get, path: "/stall?seconds=20")) }
        try await waitUntil { transport.statistics.activeTransfers == 1 }
        let start = ContinuousClock.now
        caller.cancel()
        await #expect(throws: CancellationError.self) { try await caller.value }
        #expect(ContinuousClock.now - start < .seconds(1))
        #expect(transport.statistics.activeTransfers == 0)
        await session.shutdown()
    }

    @Test func cancellingAThousandInFlightRequestsFreesEveryHandle() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 50, proxy: .none))
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        let group = Task {
            await withTaskGroup(of: (any Error)?.self) { group in
                for _ in 0..<1000 {
                    group.addTask {
                        do {
                            _ = try await session.send(HTTPRequest(method: .get, path: "/stall?seconds=30"))
                            return nil
                        } catch {
                            return error
                        }
                    }
                }
                return await group.reduce(into: [any Error]()) { if let error = $1 { $0.append(error) } }
            }
        }
        // Two per connection hold an easy handle (HTTP/1.1), the rest wait for one.
        try await waitUntil(timeout: .seconds(20)) {
            transport.statistics.activeTransfers + transport.statistics.queuedTransfers == 1000
        }
        #expect(transport.statistics.activeTransfers == 100)
        #expect(transport.statistics.queuedTransfers == 900)
        let start = ContinuousClock.now
        group.cancel()
        let errors = await group.value
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(errors.count == 1000)
        #expect(errors.allSatisfy { $0 is CancellationError })
        #expect(transport.statistics.activeTransfers == 0)
        #expect(transport.statistics.queuedTransfers == 0)
        // Cancelled handles are freed at once; only the idle pool may keep handles.
        #expect(transport.statistics.easyHandles == 0)
        await session.shutdown()
    }

    /// Plain `send` calls share one control that nobody may suspend: a middleware that
    /// suspends the control of such a request stops neither that request nor a later one.
    @Test func suspendingTheControlOfAPlainSendStopsNothing() async throws {
        let env = try await TestServers.shared()
        let file = env.file("1k")
        let suspensions = Locked(0)
        let session = Session(
            configuration: .init(
                baseURL: env.nginxHTTP,
                timeout: .seconds(10),
                middlewares: [Suspending(count: suspensions)]
            ),
            transport: CurlTransport()
        )
        for _ in 0..<3 {
            let response = try await session.send(HTTPRequest(method: .get, path: file.urlPath))
            #expect(response.status == .ok)
            #expect(response.data.count == file.size)
        }
        #expect(suspensions.withLock { $0 } == 3)
        await session.shutdown()
    }

    /// Suspends the transfer control of every request it sees.
    struct Suspending: Middleware {
        let count: Locked<Int>

        func intercept(
            _ request: HTTPRequest,
            body: RequestBody?,
            context: MiddlewareContext,
            next: Next
        ) async throws -> Response {
            context.control.suspend()
            count.withLock { $0 += 1 }
            return try await next(request, body, context)
        }
    }

    @Test func lateSubscribersSeeTheFinalState() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let task = session.task(for: HTTPRequest(method: .get, path: "/bytes/1k"))
        _ = try await task.value
        var events: [NetworkTask.Event] = []
        for await event in task.events { events.append(event) }
        #expect(events == [.stateChanged(.completed)])
        await session.shutdown()
    }
}

/// The latest progress seen, shared between a watcher task and the test.
final class ProgressRecorder: Sendable {
    private let value = LockedBox<Int64>(0)
    func record(_ bytes: Int64) { value.withLock { $0 = bytes } }
    var latest: Int64 { value.withLock { $0 } }
}
