import Foundation
import HTTPTypes
import InMemoryTracing
import Synchronization
import Testing
import Tracing

@testable import Courier

/// The spans of real requests, recorded by an in-memory tracer given to the session (no
/// global bootstrap): one client span per request, a child per transfer (attempt or redirect
/// hop) whose trace context the request carries, and a span per token request.
@Suite(.timeLimit(.minutes(1)))
struct ObservabilityTracingTests {
    func session(_ tracer: W3CInMemoryTracer, baseURL: URL, retryPolicy: RetryPolicy = .never) -> Session {
        var configuration = Session.Configuration(baseURL: baseURL)
        configuration.tracer = tracer
        configuration.retryPolicy = retryPolicy
        return Session(configuration: configuration, transport: CurlTransport(configuration: .init(proxy: .none)))
    }

    /// The request span and its transfer spans, in the order they ended.
    func tree(_ tracer: W3CInMemoryTracer) throws -> (request: FinishedInMemorySpan, transfers: [FinishedInMemorySpan])
    {
        let spans = tracer.finishedSpans
        let request = try #require(spans.last)
        #expect(request.parentSpanID == nil)
        let transfers = spans.dropLast().filter { $0.parentSpanID == request.spanID }
        #expect(transfers.count == spans.count - 1)
        #expect(spans.allSatisfy { $0.traceID == request.traceID && $0.kind == .client })
        return (request, Array(transfers))
    }

    @Test func aRequestIsAClientSpanWithTheConventionsAttributes() async throws {
        let env = try await TestServers.shared()
        let tracer = W3CInMemoryTracer()
        let session = session(tracer, baseURL: env.httpbin)
        let port = try #require(env.httpbin.port)
        let response = try await session.send(HTTPRequest(method: .get, path: "/headers?access_token=secret"))
        await session.shutdown()

        let (request, transfers) = try tree(tracer)
        #expect(request.operationName == "GET")
        #expect(request.string("http.request.method") == "GET")
        #expect(request.string("server.address") == "127.0.0.1")
        #expect(request.int("server.port") == port)
        #expect(request.string("url.full") == "http://127.0.0.1:\(port)/headers")
        #expect(request.int("http.response.status_code") == 200)
        #expect(request.string("network.protocol.version") == "1.1")
        #expect(request.string("error.type") == nil)
        let transfer = try #require(transfers.first)
        #expect(transfers.count == 1)
        #expect(transfer.operationName == "GET")
        #expect(transfer.int("http.request.resend_count") == 0)
        #expect(transfer.int("http.response.status_code") == 200)

        // httpbin echoes the trace context the request carried: the transfer span's.
        let echoed = try JSONSerialization.jsonObject(with: response.data) as? [String: [String: String]]
        #expect(echoed?["headers"]?["Traceparent"] == "00-\(transfer.traceID)-\(transfer.spanID)-01")
        // Nothing secret in any attribute.
        let values = tracer.finishedSpans.flatMap { span in
            ["url.full", "server.address"].compactMap { span.string($0) }
        }
        #expect(!values.contains { $0.contains("secret") || $0.contains("access_token") })
    }

    @Test func aRetriedRequestHasASpanPerAttempt() async throws {
        let env = try await TestServers.shared()
        let tracer = W3CInMemoryTracer()
        let session = session(
            tracer,
            baseURL: env.httpbin,
            retryPolicy: RetryPolicy(
                maximumAttempts: 2,
                baseBackoff: .milliseconds(1),
                maximumBackoff: .milliseconds(5)
            )
        )
        #expect(try await session.send(HTTPRequest(method: .get, path: "/status/503")).statusCode == 503)
        await session.shutdown()

        let (request, transfers) = try tree(tracer)
        #expect(transfers.map { $0.int("http.request.resend_count") } == [0, 1])
        #expect(transfers.allSatisfy { $0.int("http.response.status_code") == 503 && $0.status?.code == .error })
        #expect(request.string("error.type") == "503")
        #expect(request.status?.code == .error)
    }

    @Test func aRedirectHasASpanPerHop() async throws {
        let env = try await TestServers.shared()
        let tracer = W3CInMemoryTracer()
        let session = session(tracer, baseURL: env.url(.http))
        #expect(try await session.send(HTTPRequest(method: .get, path: "/redirect/same-origin")).statusCode == 200)
        await session.shutdown()

        let (request, transfers) = try tree(tracer)
        #expect(transfers.map { $0.int("http.response.status_code") } == [302, 200])
        #expect(transfers.map { $0.int("http.request.resend_count") } == [0, 1])
        #expect(transfers.last?.string("url.full")?.hasSuffix("/httpbin/headers") == true)
        #expect(request.int("http.response.status_code") == 200)
    }

    @Test func aFailedConnectionIsAnErrorSpan() async throws {
        let tracer = W3CInMemoryTracer()
        let port = try freePort()
        let session = session(tracer, baseURL: URL(string: "http://127.0.0.1:\(port)")!)
        #expect(await outcome { try await session.send(HTTPRequest(method: .get, path: "/")) } == "couldNotConnect")
        await session.shutdown()
        let (request, transfers) = try tree(tracer)
        #expect(request.string("error.type") == "couldNotConnect")
        #expect(request.status?.code == .error)
        #expect(request.errors.count == 1)
        #expect(transfers.count == 1)
    }

    @Test func aSampledOutRequestCarriesItsTraceContextWithoutAttributes() async throws {
        let env = try await TestServers.shared()
        let tracer = UnsampledTracer()
        var configuration = Session.Configuration(baseURL: env.httpbin)
        configuration.tracer = tracer
        let session = Session(
            configuration: configuration,
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/headers"))
        await session.shutdown()

        let echoed = try JSONSerialization.jsonObject(with: response.data) as? [String: [String: String]]
        #expect(echoed?["headers"]?["Traceparent"] == UnsampledTracer.traceparent)
        #expect(tracer.started.load(ordering: .relaxed) == 2)
        #expect(tracer.attributesRead.load(ordering: .relaxed) == 0)
    }
}

/// A tracer whose spans do not record, as for requests a sampler left out: their context
/// still travels, and nothing should be spent on their attributes.
final class UnsampledTracer: Tracer, Sendable {
    static let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
    let started = Atomic<Int>(0)
    let attributesRead = Atomic<Int>(0)

    final class Span: Tracing.Span {
        let context: ServiceContext
        let tracer: UnsampledTracer
        init(context: ServiceContext, tracer: UnsampledTracer) {
            self.context = context
            self.tracer = tracer
        }
        var operationName: String {
            get { "" }
            set {}
        }
        var attributes: SpanAttributes {
            get {
                tracer.attributesRead.add(1, ordering: .relaxed)
                return [:]
            }
            set {}
        }
        var isRecording: Bool { false }
        func setStatus(_ status: SpanStatus) {}
        func addEvent(_ event: SpanEvent) {}
        func recordError<Instant: TracerInstant>(
            _ error: any Error,
            attributes: SpanAttributes,
            at instant: @autoclosure () -> Instant
        ) {}
        func addLink(_ link: SpanLink) {}
        func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {}
    }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> Span {
        started.add(1, ordering: .relaxed)
        return Span(context: context(), tracer: self)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> Span? { nil }
    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Carrier == Inject.Carrier {
        injector.inject(Self.traceparent, forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout ServiceContext,
        using extractor: Extract
    ) where Carrier == Extract.Carrier {}
}
