import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Retries against the real fault server (`Tests/Servers/faults.py`): what the server saw
/// decides every test.
@Suite(.timeLimit(.minutes(1)))
struct RetryFaultServerTests {
    /// A session on the fault server with `policy`; backoff kept short unless a test needs it.
    static func session(
        _ env: TestEnvironment,
        policy: RetryPolicy = RetryPolicy(baseBackoff: .milliseconds(5), maximumBackoff: .milliseconds(20))
    ) -> Session {
        var configuration = Session.Configuration(baseURL: env.faults)
        configuration.retryPolicy = policy
        return Session(configuration: configuration, transport: CurlTransport(configuration: .init(proxy: .none)))
    }

    @Test func unavailableTwiceSucceedsOnTheThirdAttempt() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env)
        let key = uniqueFaultKey("third")
        let response = try await session.send(ResourceRequest(path: "/status/503?key=\(key)&fail=2"))
        #expect(response.status == .ok)
        #expect(response.attempts == 3)
        let seen = try await env.faultStats(forKey: key)
        #expect(seen.requests == 3)
        #expect(seen.answered == 3)
        await session.shutdown()
    }

    @Test func retryAfterSecondsIsWaitedFor() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env)
        let key = uniqueFaultKey("delta")
        let response = try await session.send(ResourceRequest(path: "/status/429?key=\(key)&fail=1&retry_after=1"))
        #expect(response.status == .ok)
        #expect(response.attempts == 2)
        let seen = try await env.faultStats(forKey: key)
        #expect(seen.requests == 2)
        // The second request arrived at least a second after the first answer left.
        #expect(seen.times[1] - seen.answerTimes[0] >= 1.0)
        await session.shutdown()
    }

    @Test func retryAfterDateIsWaitedFor() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env)
        let key = uniqueFaultKey("date")
        let response = try await session.send(
            ResourceRequest(path: "/status/503?key=\(key)&fail=1&retry_after_date=1")
        )
        #expect(response.status == .ok)
        #expect(response.attempts == 2)
        let seen = try await env.faultStats(forKey: key)
        #expect(seen.requests == 2)
        let date = try #require(seen.retryAfterDates.first)
        #expect(seen.times[1] >= date)
        await session.shutdown()
    }

    @Test func retryAfterAboveTheCapReturnsTheResponse() async throws {
        let env = try await TestServers.shared()
        var policy = RetryPolicy.default
        policy.maximumRetryAfter = .seconds(2)
        let session = Self.session(env, policy: policy)
        let key = uniqueFaultKey("cap")
        let start = ContinuousClock.now
        let response = try await session.send(ResourceRequest(path: "/status/503?key=\(key)&retry_after=5"))
        #expect(response.status == .serviceUnavailable)
        #expect(response[header: "Retry-After"] == "5")
        #expect(response.attempts == 1)
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(try await env.faultStats(forKey: key).requests == 1)
        await session.shutdown()
    }

    @Test func postIsRetriedOnlyWithAnIdempotencyKey() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env)
        let plain = uniqueFaultKey("post")
        var post = ResourceRequest(path: "/status/503?key=\(plain)&fail=2", method: .post, body: .text("order"))
        let refused = try await session.send(post)
        #expect(refused.status == .serviceUnavailable)
        #expect(refused.attempts == 1)
        #expect(try await env.faultStats(forKey: plain).methods == ["POST"])

        let keyed = uniqueFaultKey("post-keyed")
        post.path = "/status/503?key=\(keyed)&fail=2"
        post.headerFields[HTTPField.Name("Idempotency-Key")!] = keyed
        let accepted = try await session.send(post)
        #expect(accepted.status == .ok)
        #expect(accepted.attempts == 3)
        #expect(try await env.faultStats(forKey: keyed).methods == ["POST", "POST", "POST"])
        await session.shutdown()
    }

    @Test func aBodyThatCanBeSentOnceIsNotRetried() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env)
        let key = uniqueFaultKey("stream")
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("part one, ".utf8))
            continuation.yield(Data("part two".utf8))
            continuation.finish()
        }
        let response = try await session.send(
            HTTPRequest(method: .put, path: "/status/503?key=\(key)&fail=2"),
            body: .stream(chunks)
        )
        #expect(response.status == .serviceUnavailable)
        #expect(response.attempts == 1)
        #expect(try await env.faultStats(forKey: key).requests == 1)

        // A generated body is made anew for each attempt: it is retried.
        let generatedKey = uniqueFaultKey("generated")
        let generated = RequestBody.generated(length: nil) {
            AsyncStream<Data> { continuation in
                continuation.yield(Data("again".utf8))
                continuation.finish()
            }
        }
        let retried = try await session.send(
            HTTPRequest(method: .put, path: "/status/503?key=\(generatedKey)&fail=2"),
            body: generated
        )
        #expect(retried.status == .ok)
        #expect(retried.attempts == 3)
        await session.shutdown()
    }

    @Test func aRequestsNeverOverridesTheSession() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env)
        let key = uniqueFaultKey("never")
        var request = ResourceRequest(path: "/status/503?key=\(key)&fail=2")
        request.retryPolicy = .never
        let response = try await session.send(request)
        #expect(response.status == .serviceUnavailable)
        #expect(response.attempts == 1)
        #expect(try await env.faultStats(forKey: key).requests == 1)
        await session.shutdown()
    }

    @Test func connectionResetsAreRetried() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env)
        let key = uniqueFaultKey("reset")
        let response = try await session.send(ResourceRequest(path: "/reset?key=\(key)&fail=1"))
        #expect(response.status == .ok)
        let seen = try await env.faultStats(forKey: key)
        #expect(seen.dropped == 1)
        #expect(seen.answered == 1)

        await session.shutdown()

        // A session with no pooled connection: every attempt opens one, which dies under it.
        let fresh = Self.session(env)
        let always = uniqueFaultKey("reset-always")
        let error = try await #require(throws: CourierError.self) {
            try await fresh.send(ResourceRequest(path: "/reset?key=\(always)"))
        }
        #expect(error.kind == .connectionClosed)
        #expect(error.attempts == 3)
        // Each attempt reached the server once: a connection that dies under a request it
        // opened itself is not sent again below the retry policy.
        let seenAlways = try await env.faultStats(forKey: always)
        #expect(seenAlways.dropped == 3)
        await fresh.shutdown()
    }

    @Test func cancellingDuringTheBackoffEndsTheCallAtOnce() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env, policy: .default)
        let key = uniqueFaultKey("cancel")
        let call = Task { try await session.send(ResourceRequest(path: "/status/503?key=\(key)&retry_after=20")) }
        // The first answer went out: the call is in (or about to enter) its 20-second wait.
        let first = try await env.awaitFaultRequests(key: key, count: 1)
        #expect(first.answered == 1)
        let start = ContinuousClock.now
        call.cancel()
        await #expect(throws: CancellationError.self) { try await call.value }
        #expect(ContinuousClock.now - start < .seconds(5))
        // A request sent after the cancellation would have arrived before this one, on the
        // same server: it saw none.
        _ = try await session.send(ResourceRequest(path: "/status/200?key=\(uniqueFaultKey("fence"))"))
        #expect(try await env.faultStats(forKey: key).requests == 1)
        await session.shutdown()
    }

    @Test func aStormIsBoundedByTheBudget() async throws {
        let env = try await TestServers.shared()
        let session = Self.session(env, policy: .default)
        let key = uniqueFaultKey("storm")
        let total = 1_000
        let request = ResourceRequest(path: "/status/503?key=\(key)")
        let attempts = try await withThrowingTaskGroup(of: Int.self) { group in
            var started = 0
            var attempts = 0
            while started < min(50, total) {
                group.addTask { try await session.send(request).attempts }
                started += 1
            }
            while let finished = try await group.next() {
                attempts += finished
                if started < total {
                    group.addTask { try await session.send(request).attempts }
                    started += 1
                }
            }
            return attempts
        }
        let seen = try await env.faultStats(forKey: key)
        // 1,000 requests, 20 % of them, and the floor of 10 a second over 10 seconds.
        #expect(seen.requests == attempts)
        #expect(seen.requests >= total)
        #expect(seen.requests <= total + total / 5 + 100)
        print("storm: \(total) requests reached the server \(seen.requests) times")
        await session.shutdown()
    }
}
