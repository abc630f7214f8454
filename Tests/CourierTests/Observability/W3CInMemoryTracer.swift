import Foundation
import InMemoryTracing
import Synchronization
import Tracing

/// swift-distributed-tracing's in-memory tracer, with W3C ids and a `traceparent` injector
/// (the in-memory tracer's own injection writes keys of its own), so a server can echo what
/// a traced request carried.
struct W3CInMemoryTracer: Tracer {
    typealias Span = InMemorySpan

    let base: InMemoryTracer

    init() {
        let next = Atomic<UInt64>(0)
        let counter: @Sendable () -> UInt64 = { next.add(1, ordering: .relaxed).newValue }
        base = InMemoryTracer(
            idGenerator: .init(
                nextTraceID: { String(format: "%032llx", counter()) },
                nextSpanID: { String(format: "%016llx", counter()) }
            )
        )
    }

    var finishedSpans: [FinishedInMemorySpan] { base.finishedSpans }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String,
        context: @autoclosure () -> ServiceContext,
        ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant,
        function: String,
        file fileID: String,
        line: UInt
    ) -> InMemorySpan {
        base.startSpan(
            operationName,
            context: context(),
            ofKind: kind,
            at: instant(),
            function: function,
            file: fileID,
            line: line
        )
    }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? {
        base.activeSpan(identifiedBy: context)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(
        _ context: ServiceContext,
        into carrier: inout Carrier,
        using injector: Inject
    ) where Carrier == Inject.Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(span.traceID)-\(span.spanID)-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(
        _ carrier: Carrier,
        into context: inout ServiceContext,
        using extractor: Extract
    ) where Carrier == Extract.Carrier {}
}

extension FinishedInMemorySpan {
    /// A string attribute.
    func string(_ key: String) -> String? {
        guard case .string(let value)? = attributes[key]?.toSpanAttribute() else { return nil }
        return value
    }

    /// An integer attribute.
    func int(_ key: String) -> Int? {
        switch attributes[key]?.toSpanAttribute() {
        case .int64(let value)?: Int(value)
        case .int32(let value)?: Int(value)
        default: nil
        }
    }
}
