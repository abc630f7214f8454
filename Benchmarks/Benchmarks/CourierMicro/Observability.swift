// What metrics and tracing cost a request, on a Session over NullTransport (no I/O), so the
// differences are Courier's own:
//
// - `Session.send.observe.default`: nothing configured; swift-metrics and
//   swift-distributed-tracing have their default no-op backends (no bootstrap).
// - `Session.send.observe.noop`: the no-op metrics factory and tracer set explicitly on the
//   session. The session sees that both are no-ops and builds the same chain as `default`.
// - `Session.send.observe.metrics`: a metrics backend whose handlers do nothing: what Courier
//   itself spends per request once metrics are on (dimension lookup, two clock reads, the
//   transport gauges), without any backend's cost.
// - `Session.send.observe.prometheus`: swift-prometheus as the backend: Courier's cost plus a
//   real backend's (a histogram and a counter per request).
// - `Session.send.observe.tracing`: a tracer whose spans do not record (as for a request that
//   is sampled out): two spans, trace context injected into the request's header fields.
// - `Session.send.observe.tracing.recorded`: a tracer whose spans record their attributes
//   under a lock, as a real tracer's sampled spans do, without exporting them.
import Benchmark
import CoreMetrics
import Courier
import Foundation
import HTTPTypes
import Prometheus
import Synchronization
import Tracing

/// A metrics backend that is not swift-metrics' no-op one but whose handlers do nothing.
final class DiscardingMetrics: MetricsFactory, CounterHandler, FloatingPointCounterHandler, MeterHandler,
    RecorderHandler, TimerHandler
{
    func makeCounter(label: String, dimensions: [(String, String)]) -> any CounterHandler { self }
    func makeFloatingPointCounter(label: String, dimensions: [(String, String)]) -> any FloatingPointCounterHandler {
        self
    }
    func makeMeter(label: String, dimensions: [(String, String)]) -> any MeterHandler { self }
    func makeRecorder(label: String, dimensions: [(String, String)], aggregate: Bool) -> any RecorderHandler { self }
    func makeTimer(label: String, dimensions: [(String, String)]) -> any TimerHandler { self }
    func destroyCounter(_ handler: any CounterHandler) {}
    func destroyFloatingPointCounter(_ handler: any FloatingPointCounterHandler) {}
    func destroyMeter(_ handler: any MeterHandler) {}
    func destroyRecorder(_ handler: any RecorderHandler) {}
    func destroyTimer(_ handler: any TimerHandler) {}
    func increment(by amount: Int64) {}
    func increment(by amount: Double) {}
    func set(_ value: Int64) {}
    func set(_ value: Double) {}
    func decrement(by amount: Double) {}
    func record(_ value: Int64) {}
    func record(_ value: Double) {}
    func recordNanoseconds(_ duration: Int64) {}
    func reset() {}
}

/// A tracer that is not the no-op one but whose spans record nothing.
struct DiscardingTracer: Tracer {
    typealias Span = NoOpTracer.NoOpSpan

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> NoOpTracer.NoOpSpan {
        NoOpTracer.NoOpSpan(context: context())
    }

    func activeSpan(identifiedBy context: ServiceContext) -> NoOpTracer.NoOpSpan? { nil }
    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Carrier == Inject.Carrier {
        injector.inject(
            "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            forKey: "traceparent",
            into: &carrier
        )
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout ServiceContext,
        using extractor: Extract
    ) where Carrier == Extract.Carrier {}
}

/// A tracer whose spans record what they are told, under a lock, and export nothing.
struct RecordingTracer: Tracer {
    final class Span: Tracing.Span {
        let context: ServiceContext
        private let state: Mutex<(name: String, attributes: SpanAttributes, status: SpanStatus?)>

        init(name: String, context: ServiceContext) {
            self.context = context
            state = Mutex((name, [:], nil))
        }

        var operationName: String {
            get { state.withLock { $0.name } }
            set { state.withLock { $0.name = newValue } }
        }
        var attributes: SpanAttributes {
            get { state.withLock { $0.attributes } }
            set { state.withLock { $0.attributes = newValue } }
        }
        var isRecording: Bool { true }
        func setStatus(_ status: SpanStatus) { state.withLock { $0.status = status } }
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
        Span(name: operationName, context: context())
    }

    func activeSpan(identifiedBy context: ServiceContext) -> Span? { nil }
    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Carrier == Inject.Carrier {
        DiscardingTracer().inject(context, into: &carrier, using: injector)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout ServiceContext,
        using extractor: Extract
    ) where Carrier == Extract.Carrier {}
}

func registerObservabilityBenchmarks() {
    let variants: [(String, (inout Session.Configuration) -> Void)] = [
        ("default", { _ in }),
        (
            "noop",
            {
                $0.metricsFactory = NOOPMetricsHandler.instance
                $0.tracer = NoOpTracer()
            }
        ),
        ("metrics", { $0.metricsFactory = DiscardingMetrics() }),
        ("prometheus", { $0.metricsFactory = PrometheusMetricsFactory(registry: PrometheusCollectorRegistry()) }),
        ("tracing", { $0.tracer = DiscardingTracer() }),
        ("tracing.recorded", { $0.tracer = RecordingTracer() }),
    ]
    for (name, configure) in variants {
        Benchmark("Session.send.observe.\(name)") { benchmark in
            var configuration = Session.Configuration(baseURL: baseURL)
            configuration.retryPolicy = .never
            configure(&configuration)
            let session = Session(configuration: configuration, transport: NullTransport())
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await session.send(HTTPRequest(method: .get, path: "/items")))
            }
        }
    }
}
