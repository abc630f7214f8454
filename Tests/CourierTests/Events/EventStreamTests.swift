import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// ``ServerSentEvents`` against a real event-stream server (sse-starlette on uvicorn): events in
/// order across dropped connections, `Last-Event-ID`, the server's `retry`, the end on 204, the
/// answers that end a stream for good, heartbeats, the idle timeout and cancellation. Each test
/// has a key of its own, so the server's counts are its own.
@Suite(.timeLimit(.minutes(2)))
struct EventStreamTests {
    let env: TestEnvironment

    init() async throws {
        env = try await TestServers.shared()
    }

    /// A fresh key for the server's statistics.
    private func key() -> String { "events-\(UInt64.random(in: 0...UInt64.max))" }

    /// Quick reconnections, so that tests do not wait for the 3-second default.
    private func configuration(
        _ configure: (inout ServerSentEvents.Configuration) -> Void = { _ in }
    ) -> ServerSentEvents.Configuration {
        var configuration = ServerSentEvents.Configuration(
            reconnectionDelay: .milliseconds(10),
            maximumReconnectionDelay: .milliseconds(200)
        )
        configure(&configuration)
        return configuration
    }

    @Test func tenThousandEventsArriveInOrderOnceAcrossDroppedConnections() async throws {
        let key = key()
        let session = env.sseSession()
        let stream = session.events(
            ResourceRequest(path: "/events?count=10000&size=64&drop_every=997&retry=5&key=\(key)"),
            configuration: configuration { $0.reconnectionDelay = .seconds(3600) }  // the server's retry wins
        )
        var expected = 1
        var duplicatesOrGaps = 0
        for try await event in stream {
            if event.id != String(expected) || !event.data.hasPrefix("\(expected):") { duplicatesOrGaps += 1 }
            #expect(event.type == "tick")
            #expect(event.data.utf8.count == 64)
            expected = (Int(event.id ?? "") ?? expected) + 1
        }
        #expect(expected == 10_001, "the last event was \(expected - 1)")
        #expect(duplicatesOrGaps == 0)
        let stats = try await env.sseStats(key: key)
        #expect(stats.eventsSent == 10_000)
        #expect(stats.drops == 10)  // after events 997, 1994, … 9970
        // The first connection, one per drop, and the one after the clean end that got 204.
        #expect(stats.connections == stats.drops + 2)
        #expect(stats.noContent == 1)
        let resumedAt = (1...10).map { String($0 * 997) }
        #expect(stats.lastEventIDs == [nil] + resumedAt + ["10000"])
    }

    @Test func aNoContentAnswerEndsTheStreamWithoutAnError() async throws {
        let session = env.sseSession()
        var count = 0
        for try await _ in session.events(ResourceRequest(path: "/nocontent"), configuration: configuration()) {
            count += 1
        }
        #expect(count == 0)
    }

    @Test func aStreamThatEndsAfterItsLastEventStopsAtTheNoContentOfItsReconnection() async throws {
        let key = key()
        let events = try await collect(
            env.sseSession().events(
                ResourceRequest(path: "/events?count=3&key=\(key)"),
                configuration: configuration()
            )
        )
        #expect(events.map(\.id) == ["1", "2", "3"])
        let stats = try await env.sseStats(key: key)
        #expect(stats.lastEventIDs == [nil, "3"])
        #expect(stats.noContent == 1)
    }

    @Test func anAnswerThatIsNotAnEventStreamEndsItForGood() async throws {
        let session = env.sseSession()
        let error = await #expect(throws: CourierError.self) {
            _ = try await collect(session.events(ResourceRequest(path: "/notsse"), configuration: configuration()))
        }
        #expect(error?.kind == .undecodableBody)
        #expect(error?.message.contains("application/json") == true, "\(String(describing: error))")
        #expect(error?.endpoint == "GET /notsse")

        let status = await #expect(throws: CourierError.self) {
            _ = try await collect(
                session.events(ResourceRequest(path: "/status?code=503"), configuration: configuration())
            )
        }
        #expect(status?.kind == .serverError)
        #expect(status?.status?.code == 503)
        let missing = await #expect(throws: CourierError.self) {
            _ = try await collect(
                session.events(ResourceRequest(path: "/status?code=404"), configuration: configuration())
            )
        }
        #expect(missing?.kind == .clientError)
    }

    @Test func aCallersLastEventIDResumesTheFirstConnection() async throws {
        let key = key()
        var request = ResourceRequest(path: "/events?count=5&key=\(key)")
        request.headerFields[HTTPField.Name("Last-Event-ID")!] = "3"
        let events = try await collect(env.sseSession().events(request, configuration: configuration()))
        #expect(events.map(\.id) == ["4", "5"])
        #expect(try await env.sseStats(key: key).lastEventIDs == ["3", "5"])
    }

    @Test func heartbeatCommentsKeepAQuietStreamAliveLongerThanTheByteStallTimeout() async throws {
        let key = key()
        // Bytes arrive only once a second: the session's 300 ms stall timeout would end any other
        // streamed transfer; the event stream counts comments against its 2.5 s idle timeout.
        let session = Session(
            configuration: .init(baseURL: env.sse, stallTimeout: .milliseconds(300)),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let events = try await collect(
            session.events(
                ResourceRequest(path: "/heartbeat?ping=1&after=4&count=2&key=\(key)"),
                configuration: configuration {
                    $0.idleTimeout = .milliseconds(2500)
                    $0.reconnects = false
                }
            )
        )
        #expect(events.map(\.id) == ["1", "2"])
        let stats = try await env.sseStats(key: key)
        #expect(stats.connections == 1)
        #expect(stats.completed == 1)
        #expect(stats.clientGone == 0)
    }

    @Test func aSilentConnectionIsClosedAfterTheIdleTimeout() async throws {
        let key = key()
        let session = env.sseSession()
        let error = await #expect(throws: CourierError.self) {
            _ = try await collect(
                session.events(
                    ResourceRequest(path: "/heartbeat?ping=60&after=60&count=1&key=\(key)"),
                    configuration: configuration {
                        $0.idleTimeout = .milliseconds(300)
                        $0.reconnects = false
                    }
                )
            )
        }
        #expect(error?.kind == .stalled)
        #expect(error?.message.contains("idleTimeout") == true)
        try await waitUntil { try await env.sseStats(key: key).clientGone == 1 }

        // Reconnecting, each silent connection counts as a failure, up to the maximum.
        let again = key + "-again"
        let reconnecting = await #expect(throws: CourierError.self) {
            _ = try await collect(
                session.events(
                    ResourceRequest(path: "/heartbeat?ping=60&after=60&count=1&key=\(again)"),
                    configuration: configuration {
                        $0.idleTimeout = .milliseconds(300)
                        $0.maximumConsecutiveFailures = 3
                    }
                )
            )
        }
        #expect(reconnecting?.kind == .stalled)
        #expect(try await env.sseStats(key: again).connections == 3)
    }

    @Test func cancellingTheIteratingTaskClosesTheConnectionAtOnce() async throws {
        let key = key()
        let session = env.sseSession()
        let (firstEvent, arrived) = AsyncStream.makeStream(of: Void.self)
        let reader = Task {
            var count = 0
            for try await _ in session.events(
                ResourceRequest(path: "/events?count=100000&interval=200&key=\(key)"),
                configuration: configuration()
            ) {
                count += 1
                arrived.yield()
            }
            return count
        }
        var iterator = firstEvent.makeAsyncIterator()
        _ = await iterator.next()
        reader.cancel()
        let outcome = await reader.result
        if case .success(let count) = outcome { Issue.record("the iteration ended normally after \(count) events") }
        try await waitUntil { try await env.sseStats(key: key).clientGone == 1 }
        let stats = try await env.sseStats(key: key)
        #expect(stats.connections == 1)
        #expect(stats.open == 0)
    }

    @Test func anUnterminatedLastEventIsDiscardedAndChunksAreJoinedOverARealSocket() async throws {
        let bytes = Array("\u{FEFF}: hi\r\ndata: a\r\ndata: b\r\rid: 7\nevent: x\ndata: c\n\ndata: never".utf8)
        let b64 = Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let split = (0..<bytes.count).map { _ in "1" }.joined(separator: ",")
        let events = try await collect(
            env.sseSession().events(
                ResourceRequest(path: "/raw?b64=\(b64)&split=\(split)&pause_ms=1"),
                configuration: configuration { $0.reconnects = false }
            )
        )
        #expect(events == [ServerSentEvent(data: "a\nb"), ServerSentEvent(type: "x", data: "c", id: "7")])
    }

    @Test func anEventLargerThanTheMaximumEndsTheStreamWithoutReconnecting() async throws {
        let key = key()
        let error = await #expect(throws: CourierError.self) {
            _ = try await collect(
                env.sseSession().events(
                    ResourceRequest(path: "/events?count=3&size=4096&key=\(key)"),
                    configuration: configuration { $0.maximumEventBytes = 1024 }
                )
            )
        }
        #expect(error?.kind == .responseTooLarge)
        #expect(try await env.sseStats(key: key).connections == 1)
    }

    @Test func aModelsAnswerStreamsUntilItsSentinelAndIsNeverPostedTwice() async throws {
        let key = key()
        struct Prompt: Encodable {
            let prompt: String
            let tokens: Int
        }
        struct Delta: Decodable { let delta: String }
        let request = ResourceRequest(
            path: "/chat?key=\(key)",
            method: .post,
            body: try .json(Prompt(prompt: "Say ten words", tokens: 10))
        )
        var answer = ""
        var sawDone = false
        for try await event in env.sseSession().events(request, configuration: configuration()) {
            if event.data == "[DONE]" {
                sawDone = true
                continue  // the server ends the body next: the stream must end, not post again
            }
            answer += try JSONDecoder().decode(Delta.self, from: Data(event.data.utf8)).delta
        }
        #expect(sawDone)
        #expect(answer == (1...10).map { "w\($0) " }.joined())
        let stats = try await env.sseStats(key: key)
        #expect(stats.chatPrompts == ["Say ten words"])
        #expect(stats.connections == 1)
    }

    @Test func aStreamThatCannotConnectGivesUpAfterTheMaximumFailures() async throws {
        let port = try freePort()  // nothing listens there
        let session = Session(
            configuration: .init(baseURL: URL(string: "http://127.0.0.1:\(port)")!),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let error = await #expect(throws: CourierError.self) {
            _ = try await collect(
                session.events(
                    ResourceRequest(path: "/events"),
                    configuration: configuration { $0.maximumConsecutiveFailures = 3 }
                )
            )
        }
        #expect(error?.kind == .couldNotConnect)
    }

    /// Every event of `events`.
    private func collect(_ events: ServerSentEvents) async throws -> [ServerSentEvent] {
        var collected: [ServerSentEvent] = []
        for try await event in events { collected.append(event) }
        return collected
    }

    /// Waits, a bounded number of times, for the server to report what `condition` checks.
    private func waitUntil(_ condition: () async throws -> Bool) async throws {
        for _ in 0..<200 {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(25))
        }
        Issue.record("the server never reported it")
    }
}
