import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Which timeout bounds what, against nginx: `/stall` sends a head and then nothing,
/// `/stall-headers` sends nothing, `/slow` moves 256 KiB steadily over 3–4 seconds.
@Suite(.timeLimit(.minutes(1)))
struct TimeoutTests {
    @Test func aBodyThatStopsMovingIsStalled() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env) {
            $0.timeout = .seconds(20)
            $0.stallTimeout = .seconds(1)
        }
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/stall?seconds=10"))
        }
        #expect(error?.kind == .stalled, "\(String(describing: error))")
        #expect(error?.receivedResponse == true)
        await session.shutdown()
    }

    @Test func aStreamedBodyOutlivesTheTimeoutWhileItMoves() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env) {
            $0.timeout = .seconds(1)
            $0.stallTimeout = .seconds(5)
        }
        let slow = env.file("slow")
        let response = try await session.stream(HTTPRequest(method: .get, path: slow.urlPath))
        var body = Data()
        for try await chunk in response.body { body.append(chunk) }
        #expect(body.count == slow.size)
        #expect(body.sha256Hex == slow.sha256)
        #expect(response.metrics?.total ?? .zero < .seconds(1))  // the head came at once
        await session.shutdown()
    }

    @Test func aBufferedBodyIsBoundedByTheTimeout() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env) {
            $0.timeout = .seconds(1)
            $0.stallTimeout = .seconds(5)
        }
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: env.file("slow").urlPath))
        }
        #expect(error?.kind == .timedOut, "\(String(describing: error))")
        #expect(error?.receivedResponse == true)
        await session.shutdown()
    }

    @Test func aHeadThatNeverComesTimesOutAlsoWhenStreamed() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env) { $0.timeout = .seconds(1) }
        let error = await #expect(throws: CourierError.self) {
            try await session.stream(HTTPRequest(method: .get, path: "/stall-headers?seconds=10"))
        }
        #expect(error?.kind == .timedOut, "\(String(describing: error))")
        #expect(error?.receivedResponse == false)
        await session.shutdown()
    }

    @Test func aRequestDeadlineReplacesTheSessionTimeout() async throws {
        let env = try await TestServers.shared()
        let slow = env.file("slow")
        let patient = SessionFactory.session(env) { $0.timeout = .seconds(1) }
        let response = try await patient.send(ResourceRequest(path: slow.urlPath, deadline: .now + .seconds(20)))
        #expect(response.data.sha256Hex == slow.sha256)
        await patient.shutdown()

        let hasty = SessionFactory.session(env) { $0.timeout = .seconds(60) }
        let error = await #expect(throws: CourierError.self) {
            try await hasty.send(ResourceRequest(path: slow.urlPath, deadline: .now + .milliseconds(500)))
        }
        #expect(error?.kind == .timedOut)
        #expect(error?.endpoint == "GET \(slow.urlPath)")
        await hasty.shutdown()
    }

    @Test func aPerCallDeadlineBoundsAnHTTPRequestSentOrStreamedOrStarted() async throws {
        let env = try await TestServers.shared()
        let slow = env.file("slow")
        let request = HTTPRequest(method: .get, path: slow.urlPath)
        let session = SessionFactory.session(env) { $0.timeout = .seconds(1) }
        // A later deadline than the session's timeout lets the whole body come.
        let patient = try await session.send(request, deadline: .now + .seconds(20))
        #expect(patient.data.sha256Hex == slow.sha256)
        let patientTask = session.task(for: request, deadline: .now + .seconds(20))
        #expect(try await patientTask.value.data.sha256Hex == slow.sha256)
        await session.shutdown()

        let hasty = SessionFactory.session(env) { $0.timeout = .seconds(60) }
        let sent = await #expect(throws: CourierError.self) {
            try await hasty.send(request, deadline: .now + .milliseconds(500))
        }
        #expect(sent?.kind == .timedOut)
        #expect(sent?.endpoint == "GET \(slow.urlPath)")
        let started = await #expect(throws: CourierError.self) {
            try await hasty.task(for: request, deadline: .now + .milliseconds(500)).value
        }
        #expect(started?.kind == .timedOut)
        // A streamed request's deadline bounds its head, not its body.
        let streamed = try await hasty.stream(request, deadline: .now + .milliseconds(500))
        #expect(try await streamed.body.collect(upTo: 1 << 20).sha256Hex == slow.sha256)
        let neverAnswered = await #expect(throws: CourierError.self) {
            try await hasty.stream(
                HTTPRequest(method: .get, path: "/stall-headers?seconds=10"),
                deadline: .now + .milliseconds(500)
            )
        }
        #expect(neverAnswered?.kind == .timedOut)
        #expect(neverAnswered?.receivedResponse == false)
        await hasty.shutdown()
    }

    /// A backend that needs longer than the stall timeout to answer is slow, not stalled:
    /// until the head arrives only the deadline counts.
    @Test func aSlowAnswerIsNotAStall() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env) {
            $0.timeout = .seconds(20)
            $0.stallTimeout = .seconds(1)
            $0.retryPolicy = .never
        }
        let response = try await session.send(HTTPRequest(method: .get, path: "/late?seconds=3"))
        #expect(response.status == .ok)
        #expect(response.data == Data("late\n".utf8))
        await session.shutdown()
    }

    @Test func aStreamPausedForItsConsumerIsNotStalled() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env) {
            $0.stallTimeout = .seconds(1)
            $0.streamBufferSize = 64 << 10
        }
        let file = env.file("1m")
        let response = try await session.stream(HTTPRequest(method: .get, path: file.urlPath))
        var body = Data()
        var first = true
        for try await chunk in response.body {
            body.append(chunk)
            if first {
                // The consumer falls behind for longer than the stall timeout: the transfer
                // is paused for it, not stalled.
                first = false
                try await Task.sleep(for: .milliseconds(2500))
            }
        }
        #expect(body.sha256Hex == file.sha256)
        await session.shutdown()
    }
}
