import CoreMetrics
import Foundation
import HTTPTypes
import MetricsTestKit
import Testing

@testable import Courier

/// The metrics of real requests against the suite's httpbin, recorded into a factory given to
/// the session (no global bootstrap): names and dimensions as the OpenTelemetry HTTP client
/// conventions give them, never a path or a query.
@Suite(.timeLimit(.minutes(1)))
struct ObservabilityMetricsTests {
    static let duration = "http.client.request.duration"
    static let requests = "courier.http.client.requests"

    func session(_ metrics: TestMetrics, baseURL: URL, retryPolicy: RetryPolicy = .never) -> Session {
        var configuration = Session.Configuration(baseURL: baseURL)
        configuration.metricsFactory = metrics
        configuration.retryPolicy = retryPolicy
        return Session(configuration: configuration, transport: CurlTransport(configuration: .init(proxy: .none)))
    }

    @Test func requestsRecordDurationAndCountByMethodServerStatusAndProtocol() async throws {
        let env = try await TestServers.shared()
        let metrics = TestMetrics()
        let session = session(metrics, baseURL: env.httpbin)
        let port = String(try #require(env.httpbin.port))

        #expect(try await session.send(HTTPRequest(method: .get, path: "/get?token=secret")).statusCode == 200)
        #expect(try await session.send(HTTPRequest(method: .get, path: "/status/200")).statusCode == 200)
        #expect(try await session.send(HTTPRequest(method: .delete, path: "/status/404")).statusCode == 404)
        await session.shutdown()

        let timers = metrics.timers(Self.duration)
        let ok = try #require(timers.first { $0.dimensions["http.response.status_code"] == "200" })
        #expect(
            ok.dimensions == [
                "http.request.method": "GET", "server.address": "127.0.0.1", "server.port": port,
                "http.response.status_code": "200", "network.protocol.version": "1.1",
            ]
        )
        #expect(ok.values.count == 2)
        #expect(ok.values.allSatisfy { $0 > 0 })
        let missing = try #require(timers.first { $0.dimensions["http.response.status_code"] == "404" })
        #expect(missing.dimensions["http.request.method"] == "DELETE")
        #expect(missing.dimensions["error.type"] == "404")
        #expect(missing.values.count == 1)
        #expect(metrics.timers(label: Self.duration).allSatisfy { $0.displayUnit == .seconds })

        #expect(metrics.total(Self.requests) == 3)
        #expect(metrics.total(Self.requests, where: ["http.response.status_code": "200"]) == 2)
        // No dimension carries a path or a query.
        let values =
            (metrics.timers(label: Self.duration).flatMap(\.dimensions)
            + metrics.counters(label: Self.requests).flatMap(\.dimensions)).map(\.1)
        #expect(!values.contains { $0.contains("/") || $0.contains("secret") })
        // The transport's gauges were sampled, and end at zero.
        #expect(try metrics.expectMeter(RequestMetrics.activeTransfersLabel).lastValue == 0)
        #expect(try metrics.expectMeter(RequestMetrics.queuedTransfersLabel).lastValue == 0)
    }

    @Test func anUnknownMethodIsOther() async throws {
        let env = try await TestServers.shared()
        let metrics = TestMetrics()
        let session = session(metrics, baseURL: env.url(.http))
        _ = try await session.send(HTTPRequest(method: try #require(.init("PURGE")), path: "/echo"))
        await session.shutdown()
        let timer = try #require(metrics.timers(Self.duration).first)
        #expect(timer.dimensions["http.request.method"] == "_OTHER")
    }

    @Test func aRefusedConnectionRecordsItsErrorType() async throws {
        let metrics = TestMetrics()
        let port = try freePort()
        let session = session(metrics, baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        let result = await outcome { try await session.send(HTTPRequest(method: .get, path: "/")) }
        await session.shutdown()
        #expect(result == "couldNotConnect")
        let timer = try #require(metrics.timers(Self.duration).first)
        #expect(
            timer.dimensions == [
                "http.request.method": "GET", "server.address": "127.0.0.1", "server.port": String(port),
                "error.type": "couldNotConnect",
            ]
        )
        #expect(metrics.total(Self.requests, where: ["error.type": "couldNotConnect"]) == 1)
    }

    @Test func retriesAndRefusalsOfTheBudgetAreCounted() async throws {
        let env = try await TestServers.shared()
        let metrics = TestMetrics()
        // Three attempts, no budget beyond the minimum of zero per second and a ratio of zero:
        // the first request's retries are refused by the budget.
        let starved = RetryPolicy(
            maximumAttempts: 3,
            baseBackoff: .milliseconds(1),
            maximumBackoff: .milliseconds(5),
            retryBudgetRatio: 0,
            minimumRetriesPerSecond: 0
        )
        let refused = session(metrics, baseURL: env.httpbin, retryPolicy: starved)
        #expect(try await refused.send(HTTPRequest(method: .get, path: "/status/503")).statusCode == 503)
        await refused.shutdown()
        #expect(metrics.total(RetryMetrics.retriesLabel) == 0)
        #expect(metrics.total(RetryMetrics.budgetExhaustedLabel) == 1)

        let retried = session(
            metrics,
            baseURL: env.httpbin,
            retryPolicy: RetryPolicy(
                maximumAttempts: 3,
                baseBackoff: .milliseconds(1),
                maximumBackoff: .milliseconds(5)
            )
        )
        #expect(try await retried.send(HTTPRequest(method: .get, path: "/status/503")).statusCode == 503)
        await retried.shutdown()
        #expect(metrics.total(RetryMetrics.retriesLabel) == 2)
        // One logical request each, whatever the attempts.
        #expect(metrics.total(Self.requests, where: ["http.response.status_code": "503"]) == 2)
    }

    @Test func withoutABackendTheSessionHasNoInstruments() async throws {
        let session = Session(configuration: .init())
        #expect(session.instruments == nil)
        var configuration = Session.Configuration()
        configuration.metricsFactory = TestMetrics()
        let measured = Session(configuration: configuration)
        #expect(measured.instruments?.metrics != nil)
        #expect(measured.instruments?.tracer == nil)
        await session.shutdown()
        await measured.shutdown()
    }
}
