import Foundation
import HTTPTypes
import InMemoryTracing
import MetricsTestKit
import Testing
import Tracing

@testable import Courier

/// Token renewals and grants against the real authorization server: a span inside the span of
/// the request that needed the token, the token endpoint's request below it, and the
/// renewal and wait metrics per authorization level.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct ObservabilityAuthTests {
    static func access(_ env: AuthEnvironment, tracer: W3CInMemoryTracer, metrics: TestMetrics) throws -> ResourceAccess
    {
        var configuration = env.configuration()
        configuration.tracer = tracer
        configuration.metricsFactory = metrics
        return try ResourceAccess(configuration: configuration)
    }

    @Test func aRenewalIsASpanOfTheRequestThatNeededIt() async throws {
        let env = try await AuthServers.shared()
        let admin = OAuthAdmin(env)
        let tracer = W3CInMemoryTracer()
        let metrics = TestMetrics()
        let access = try Self.access(env, tracer: tracer, metrics: metrics)
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        try await admin.expireAll()  // the server now rejects the token the client holds
        tracer.base.clearFinishedSpans()

        let response = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        #expect(response.statusCode == 200)
        await access.shutdown()

        let spans = tracer.finishedSpans
        let request = try #require(spans.first { $0.parentSpanID == nil })
        #expect(request.operationName == "GET")
        #expect(request.int("http.response.status_code") == 200)
        let transfers = spans.filter { $0.parentSpanID == request.spanID && $0.operationName == "GET" }
        #expect(transfers.map { $0.int("http.response.status_code") } == [401, 200])
        #expect(transfers.map { $0.int("http.request.resend_count") } == [0, 1])
        let renewal = try #require(spans.first { $0.operationName == "token renewal" })
        #expect(renewal.parentSpanID == request.spanID)
        #expect(renewal.string("courier.authorization.level") == "user")
        let tokenRequest = try #require(spans.first { $0.parentSpanID == renewal.spanID })
        #expect(tokenRequest.operationName == "POST")
        #expect(tokenRequest.int("http.response.status_code") == 200)
        #expect(Set(spans.map(\.traceID)) == [request.traceID])
        // No credential in any attribute.
        let values = spans.flatMap { span in ["url.full", "server.address"].compactMap { span.string($0) } }
        #expect(!values.contains { $0.contains("wonderland") || $0.contains("secret") || $0.contains("?") })

        #expect(metrics.total(TokenInstruments.renewalsLabel, where: ["courier.authorization.level": "user"]) == 1)
        #expect(metrics.total(TokenInstruments.failuresLabel) == 0)
    }

    @Test func aRequestWaitingForItsFirstTokenIsTimed() async throws {
        let env = try await AuthServers.shared()
        let tracer = W3CInMemoryTracer()
        let metrics = TestMetrics()
        let access = try Self.access(env, tracer: tracer, metrics: metrics)
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
        #expect(response.statusCode == 200)
        await access.shutdown()

        // Each level of the access has its timer; the device level's recorded the one wait.
        let wait = try #require(
            metrics.timers(TokenInstruments.waitLabel).first {
                $0.dimensions["courier.authorization.level"] == "device"
            }
        )
        #expect(wait.values.count == 1)
        #expect(wait.values.allSatisfy { $0 > 0 })
        let grant = try #require(tracer.finishedSpans.first { $0.operationName == "token grant" })
        let request = try #require(tracer.finishedSpans.first { $0.spanID == grant.parentSpanID })
        #expect(request.operationName == "GET")
        #expect(request.parentSpanID == nil)
        // The resource request and the token request are both counted, by their own server.
        #expect(metrics.total("courier.http.client.requests", where: ["http.request.method": "POST"]) == 1)
        #expect(metrics.total("courier.http.client.requests", where: ["http.request.method": "GET"]) == 1)
    }
}
