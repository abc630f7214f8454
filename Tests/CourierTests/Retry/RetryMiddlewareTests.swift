import CourierTesting
import Foundation
import HTTPTypes
import Logging
import Testing

@testable import Courier

/// The retry step in a session's chain, on a mock transport.
@Suite(.timeLimit(.minutes(1)))
struct RetryMiddlewareTests {
    static let base = URL(string: "https://api.example.com")!

    static func response(_ status: HTTPResponse.Status, retryAfter: String? = nil) -> Result<Response, any Error> {
        var head = HTTPResponse(status: status)
        if let retryAfter { head.headerFields[.retryAfter] = retryAfter }
        return .success(Response(head: head))
    }

    /// A policy whose waits are short, so that tests are quick.
    static let quick = RetryPolicy(baseBackoff: .milliseconds(1), maximumBackoff: .milliseconds(5))

    static func session(
        _ transport: MockTransport,
        policy: RetryPolicy = quick,
        middlewares: [any Middleware] = []
    ) -> Session {
        var configuration = Session.Configuration(baseURL: base, middlewares: middlewares)
        configuration.retryPolicy = policy
        return Session(configuration: configuration, transport: transport)
    }

    /// Records the attempt number each request reaches it with.
    struct AttemptProbe: Middleware {
        let attempts: Locked<[Int]>

        func intercept(
            _ request: HTTPRequest,
            body: RequestBody?,
            context: MiddlewareContext,
            next: Next
        ) async throws -> Response {
            attempts.withLock { $0.append(context.attempt) }
            return try await next(request, body, context)
        }
    }

    @Test func theSessionPutsRetryAfterLeadingLoggingAndNeverTwice() {
        let logger = Logger(label: "test")
        let probe = AttemptProbe(attempts: Locked([]))
        var configuration = Session.Configuration(
            middlewares: [LoggingMiddleware(logger: logger), LoggingMiddleware(logger: logger), probe]
        )
        let budget = RetryBudget()
        let chain = configuration.middlewares(retryBudget: budget)
        #expect(
            chain.map { "\(type(of: $0))" } == [
                "LoggingMiddleware", "LoggingMiddleware", "RetryMiddleware", "AttemptProbe",
            ]
        )
        configuration.middlewares = [probe]
        #expect(
            configuration.middlewares(retryBudget: budget).map { "\(type(of: $0))" } == [
                "RetryMiddleware", "AttemptProbe",
            ]
        )
        configuration.middlewares = [LoggingMiddleware(logger: logger)]
        #expect(
            configuration.middlewares(retryBudget: budget).map { "\(type(of: $0))" } == [
                "LoggingMiddleware", "RetryMiddleware",
            ]
        )
        configuration.middlewares = [probe, RetryMiddleware(policy: .default, budget: budget)]
        #expect(
            configuration.middlewares(retryBudget: budget).map { "\(type(of: $0))" } == [
                "AttemptProbe", "RetryMiddleware",
            ]
        )
    }

    @Test func unavailableTwiceThenOK() async throws {
        let transport = MockTransport(responses: [
            Self.response(.serviceUnavailable), Self.response(.badGateway), Self.response(.ok),
        ])
        let attempts = Locked<[Int]>([])
        let session = Self.session(transport, middlewares: [AttemptProbe(attempts: attempts)])
        let response = try await session.send(HTTPRequest(method: .get, path: "/items"))
        #expect(response.status == .ok)
        #expect(response.attempts == 3)
        #expect(transport.requests.count == 3)
        #expect(attempts.value == [1, 2, 3])
    }

    @Test func aResponseNotRetriedSaysOneAttempt() async throws {
        let transport = MockTransport(responses: [Self.response(.internalServerError)])
        let response = try await Self.session(transport).send(HTTPRequest(method: .get, path: "/"))
        #expect(response.status == .internalServerError)
        #expect(response.attempts == 1)
    }

    @Test func attemptsUsedUpReturnTheLastResponse() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .gatewayTimeout)) }
        let response = try await Self.session(transport).send(HTTPRequest(method: .get, path: "/"))
        #expect(response.status == .gatewayTimeout)
        #expect(response.attempts == 3)
        #expect(transport.requests.count == 3)
    }

    @Test func connectionFailuresAreRetriedAndTheErrorCountsTheAttempts() async throws {
        let transport = MockTransport { _, _ in throw CourierError(.connectionClosed) }
        let error = try await #require(throws: CourierError.self) {
            try await Self.session(transport).send(HTTPRequest(method: .get, path: "/"))
        }
        #expect(error.kind == .connectionClosed)
        #expect(error.attempts == 3)
        #expect(error.endpoint == "GET /")
        #expect(transport.requests.count == 3)
    }

    @Test func aTimeoutAfterTheResponseBeganIsNotRetried() async throws {
        var late = CourierError(.stalled)
        late.receivedResponse = true
        let transport = MockTransport(responses: [.failure(late)])
        let error = try await #require(throws: CourierError.self) {
            try await Self.session(transport).send(HTTPRequest(method: .get, path: "/"))
        }
        #expect(error.kind == .stalled)
        #expect(error.attempts == 1)
        #expect(transport.requests.count == 1)
    }

    @Test func securityFailuresAreNotRetried() async throws {
        let transport = MockTransport { _, _ in throw CourierError(.pinMismatch) }
        await #expect(throws: CourierError(.pinMismatch)) {
            try await Self.session(transport).send(HTTPRequest(method: .get, path: "/"))
        }
        #expect(transport.requests.count == 1)
    }

    @Test func postIsNotRetriedUnlessItCarriesAnIdempotencyKey() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .serviceUnavailable)) }
        let session = Self.session(transport)
        var post = HTTPRequest(method: .post, path: "/orders")
        #expect(try await session.send(post, body: .string("{}")).attempts == 1)
        #expect(transport.requests.count == 1)
        post.headerFields[HTTPField.Name("Idempotency-Key")!] = "order-7"
        #expect(try await session.send(post, body: .string("{}")).attempts == 3)
        #expect(transport.requests.count == 4)
        #expect(transport.requests.dropFirst().allSatisfy { $0.body == Data("{}".utf8) })
    }

    @Test func aWaitPastTheDeadlineIsNotTaken() async throws {
        let transport = MockTransport { _, _ in
            var head = HTTPResponse(status: .serviceUnavailable)
            head.headerFields[.retryAfter] = "5"
            return Response(head: head)
        }
        var request = ResourceRequest(path: "/")
        request.deadline = .now + .seconds(2)
        let start = ContinuousClock.now
        let response = try await Self.session(transport).send(request)
        #expect(response.status == .serviceUnavailable)
        #expect(response.attempts == 1)
        #expect(ContinuousClock.now - start < .seconds(2))
        #expect(transport.requests.count == 1)
    }

    @Test func aSpentBudgetReturnsTheLastResponse() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .serviceUnavailable)) }
        var policy = Self.quick
        policy.retryBudgetRatio = 0
        policy.minimumRetriesPerSecond = 0
        let response = try await Self.session(transport, policy: policy).send(HTTPRequest(method: .get, path: "/"))
        #expect(response.attempts == 1)
        #expect(transport.requests.count == 1)
    }

    @Test func aRequestsPolicyReplacesTheSessions() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .serviceUnavailable)) }
        let session = Self.session(transport, policy: Self.quick)
        var request = ResourceRequest(path: "/")
        request.retryPolicy = .never
        #expect(try await session.send(request).attempts == 1)
        #expect(transport.requests.count == 1)

        let quiet = Self.session(transport, policy: .never)
        #expect(try await quiet.send(ResourceRequest(path: "/")).attempts == 1)
        var five = Self.quick
        five.maximumAttempts = 5
        request.retryPolicy = five
        #expect(try await quiet.send(request).attempts == 5)
        let task = try quiet.task(for: request)
        #expect(try await task.value.attempts == 5)
        #expect(transport.requests.count == 12)
    }

    @Test func loggingShowsOneRequestAndOneDebugLinePerRetry() async throws {
        let handler = CapturingLogHandler()
        let logger = handler.makeLogger()
        let transport = MockTransport(responses: [
            Self.response(.serviceUnavailable), Self.response(.tooManyRequests, retryAfter: "0"), Self.response(.ok),
        ])
        let session = Self.session(transport, middlewares: [LoggingMiddleware(logger: logger)])
        _ = try await session.send(HTTPRequest(method: .get, path: "/items?access_token=secret"), logger: logger)
        let lines = handler.captured
        #expect(lines.filter { $0.hasPrefix("info → GET") }.count == 1)
        #expect(lines.filter { $0.hasPrefix("info ← GET") }.count == 1)
        let retries = lines.filter { $0.hasPrefix("debug retrying") }
        #expect(retries.count == 2)
        #expect(retries.first?.contains("after status 503: attempt 2 of 3 in") == true)
        #expect(retries.last?.contains("after status 429, Retry-After 0: attempt 3 of 3 in 0.0 ms") == true)
        #expect(!lines.joined().contains("secret"))
    }

    @Test func cancellingDuringTheWaitEndsAtOnce() async throws {
        let transport = MockTransport { _, _ in
            var head = HTTPResponse(status: .serviceUnavailable)
            head.headerFields[.retryAfter] = "20"
            return Response(head: head)
        }
        let session = Self.session(transport)
        let task = Task { try await session.send(HTTPRequest(method: .get, path: "/")) }
        while transport.requests.isEmpty { await Task.yield() }
        let start = ContinuousClock.now
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
        #expect(ContinuousClock.now - start < .seconds(5))
        #expect(transport.requests.count == 1)
    }
}
