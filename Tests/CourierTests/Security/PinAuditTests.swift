import Foundation
import HTTPTypes
import MetricsTestKit
import Testing

@testable import Courier

/// Pin audit mode: a verified chain that matches no pin is reported and let through; in
/// enforce mode the same chain is reported and refused.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct PinAuditTests {
    /// A secured transport with one connection per host (so that a run of requests has one
    /// handshake), whose pin mismatch reports go into a stream.
    static func transport(
        _ env: TestEnvironment,
        pins: [SPKIPin],
        mode: TrustPolicy.PinMode,
        metrics: TestMetrics
    ) throws -> (CurlTransport, AsyncStream<PinMismatchReport>) {
        let (reports, continuation) = AsyncStream.makeStream(of: PinMismatchReport.self)
        let security = try SecurityConfiguration.secured(
            trust: [try TrustPolicy(host: "127.0.0.1", pins: pins, pinMode: mode)]
        ) { report in
            continuation.yield(report)
        }
        let transport = TrustRotationSupport.transport(
            env,
            security,
            allowsHTTP2: false,
            connectionsPerHost: 1,
            metrics: metrics
        )
        return (transport, reports)
    }

    @Test func auditModeLetsAMismatchThroughAndReportsItOncePerConnection() async throws {
        let env = try await TestServers.shared()
        let metrics = TestMetrics()
        let expected = [SecuritySupport.unrelatedPin]
        let (transport, reports) = try Self.transport(env, pins: expected, mode: .audit, metrics: metrics)
        let session = Session(configuration: .init(baseURL: env.url(.https)), transport: transport)
        for _ in 0..<5 {
            let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
            #expect(response.status == .ok)
            #expect(response.data.count == 1024)
        }
        var iterator = reports.makeAsyncIterator()
        let report = try #require(await iterator.next())
        #expect(report.host == "127.0.0.1")
        #expect(report.port == env.url(.https).port)
        #expect(report.mode == .audit)
        #expect(report.expectedPins == expected)
        #expect(
            report.chainPins.map(\.base64) == [env.leafPin, env.intermediatePin, env.rootPin],
            "the verified chain, leaf first"
        )
        // The counter is counted in the handshake itself, before the request completes.
        let counter = try metrics.expectCounter(
            PinMismatchMetrics.label,
            [("host", "127.0.0.1"), ("mode", "audit")]
        )
        #expect(counter.totalValue == 1, "one report per new connection; five requests shared one")
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func enforceModeRefusesTheSameChainAndReportsIt() async throws {
        let env = try await TestServers.shared()
        let metrics = TestMetrics()
        let expected = [SecuritySupport.unrelatedPin]
        let (transport, reports) = try Self.transport(env, pins: expected, mode: .enforce, metrics: metrics)
        let session = Session(configuration: .init(baseURL: env.url(.https)), transport: transport)
        let marker = SecuritySupport.uniquePath("/bytes/0")
        await #expect(throws: CourierError.self) {
            do {
                _ = try await session.send(HTTPRequest(method: .get, path: marker))
            } catch let error as CourierError {
                #expect(error.kind == .pinMismatch)
                throw error
            }
        }
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
        var iterator = reports.makeAsyncIterator()
        let report = try #require(await iterator.next())
        #expect(report.mode == .enforce)
        #expect(report.expectedPins == expected)
        #expect(report.chainPins.first?.base64 == env.leafPin)
        let counter = try metrics.expectCounter(
            PinMismatchMetrics.label,
            [("host", "127.0.0.1"), ("mode", "enforce")]
        )
        #expect(counter.totalValue >= 1)
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func auditModeNeverSkipsChainVerification() async throws {
        let env = try await TestServers.shared()
        let metrics = TestMetrics()
        // The attacker's chain matches no pin and does not verify against the suite's root:
        // audit mode refuses it like enforce mode, and reports nothing (it is no pin mismatch).
        let (transport, _) = try Self.transport(
            env,
            pins: [try SecuritySupport.pin(env.leafPin)],
            mode: .audit,
            metrics: metrics
        )
        let session = Session(configuration: .init(baseURL: env.url(.attacker)), transport: transport)
        await #expect {
            _ = try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
        } throws: { ($0 as? CourierError)?.kind == .tlsFailure }
        #expect(metrics.counters(label: PinMismatchMetrics.label).isEmpty)
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func auditModeNeverSkipsHostNameVerification() async throws {
        let env = try await TestServers.shared()
        let metrics = TestMetrics()
        let (transport, _) = try Self.transport(
            env,
            pins: [SecuritySupport.unrelatedPin],
            mode: .audit,
            metrics: metrics
        )
        // The wrong-host server's chain verifies and is for other.example: the host name check
        // still refuses it, whatever audit mode lets through.
        let session = Session(configuration: .init(baseURL: env.url(.wrongHost)), transport: transport)
        await #expect {
            _ = try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
        } throws: { ($0 as? CourierError)?.kind == .tlsFailure }
        await session.shutdown()
        await transport.shutdown()
    }
}
