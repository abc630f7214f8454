import CoreMetrics
import Foundation
import HTTPTypes
import Tracing

/// The metrics and the tracer one session's requests report to, resolved once per
/// configuration: `nil` when both are the no-op ones, and then the session's chain has no
/// observing layer at all, so an application without a backend pays nothing per request.
final class RequestInstruments: Sendable {
    /// The request metrics, or `nil` when the factory is swift-metrics' no-op one.
    let metrics: RequestMetrics?
    /// The tracer, or `nil` when it is the no-op one.
    let tracer: (any Tracer)?

    private init(metrics: RequestMetrics?, tracer: (any Tracer)?) {
        self.metrics = metrics
        self.tracer = tracer
    }

    /// The instruments of `configuration`, or `nil` when it has neither metrics nor tracing.
    static func resolve(_ configuration: Session.Configuration, transport: any Transport) -> RequestInstruments? {
        let factory = configuration.metricsFactory ?? MetricsSystem.factory
        let metrics = factory is NOOPMetricsHandler ? nil : RequestMetrics(factory: factory, transport: transport)
        let tracer = configuration.tracer ?? InstrumentationSystem.tracer
        let tracing = tracer is NoOpTracer ? nil : tracer
        guard metrics != nil || tracing != nil else { return nil }
        return RequestInstruments(metrics: metrics, tracer: tracing)
    }

    /// The factory of `configuration` when it is not the no-op one: where the retry and
    /// token metrics go.
    static func metricsFactory(of configuration: Session.Configuration) -> (any MetricsFactory)? {
        let factory = configuration.metricsFactory ?? MetricsSystem.factory
        return factory is NOOPMetricsHandler ? nil : factory
    }

    /// Sends one logical request — every attempt, challenge and redirect — in a client span,
    /// and records its duration and outcome.
    ///
    /// A span that does not record (sampled out) gets no attributes: only its context travels.
    /// The work before and after the await is done by functions of their own, and what the end
    /// needs from the start travels in one fixed-layout ``Observation``: the async frame every
    /// request in flight keeps holds that, not what starting and ending the span takes.
    func observe(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Middleware.Next
    ) async throws -> Response {
        let observation = begin(request, context: context)
        do {
            let response: Response
            if let span = observation.span {
                response = try await ServiceContext.withValue(span.context) {
                    try await next(request, body, observation.context)
                }
            } else {
                response = try await next(request, body, observation.context)
            }
            end(observation, with: response)
            return response
        } catch {
            end(observation, failingWith: error)
            throw error
        }
    }

    /// One logical request under observation: what its end needs from its start, in a fixed
    /// layout (its start as a distance from `ContinuousClock.reference`).
    private struct Observation: Sendable {
        let start: Duration
        /// The request's context, counting transfers while it is traced.
        let context: MiddlewareContext
        let span: (any Span)?
        let isRecording: Bool
        /// The request's attributes, when metrics or a recording span need them.
        let semantics: HTTPClientSemantics?
    }

    /// Starts observing `request`: its span, when traced, with the request's attributes.
    @inline(never)
    private func begin(_ request: HTTPRequest, context: MiddlewareContext) -> Observation {
        let start = ContinuousClock.sinceReference
        metrics?.sampleTransport()
        var context = context
        if tracer != nil { context.transfers = TransferCount() }
        let span = tracer.map { tracer -> any Span in
            tracer.startSpan(
                HTTPClientSemantics.spanName(request.method),
                context: ServiceContext.current ?? .topLevel,
                ofKind: .client
            )
        }
        let isRecording = span?.isRecording ?? false
        let semantics = metrics != nil || isRecording ? HTTPClientSemantics(request) : nil
        if isRecording, let span, let semantics {
            span.updateAttributes { $0.set(semantics, url: request) }
        }
        return Observation(start: start, context: context, span: span, isRecording: isRecording, semantics: semantics)
    }

    /// Records the request's duration and status, and ends its span.
    @inline(never)
    private func end(_ observation: Observation, with response: Response) {
        let status = response.statusCode
        let errorType = HTTPClientSemantics.errorType(status: status)
        let version = HTTPClientSemantics.protocolVersion(response.metrics)
        if let semantics = observation.semantics {
            record(semantics, status: status, errorType: errorType, version: version, since: observation.start)
        }
        observation.span?.end(
            status: status,
            errorType: errorType,
            version: version,
            isRecording: observation.isRecording
        )
    }

    /// Records the request's duration and failure, and ends its span as failed.
    @inline(never)
    private func end(_ observation: Observation, failingWith error: any Error) {
        if let semantics = observation.semantics {
            record(
                semantics,
                status: nil,
                errorType: HTTPClientSemantics.errorType(error),
                version: nil,
                since: observation.start
            )
        }
        observation.span?.end(failingWith: error)
    }

    private func record(
        _ semantics: HTTPClientSemantics,
        status: Int?,
        errorType: String?,
        version: String?,
        since start: Duration
    ) {
        guard let metrics else { return }
        let elapsed = (ContinuousClock.sinceReference - start).components
        let nanoseconds = elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000
        let key = RequestMetrics.Key(
            method: semantics.method,
            serverAddress: semantics.serverAddress,
            serverPort: semantics.serverPort,
            status: status,
            errorType: errorType,
            protocolVersion: version
        )
        metrics.record(key, nanoseconds: nanoseconds)
    }

    /// Sends one transfer — an attempt or a redirect hop — in a client span of its own, the
    /// trace context of that span injected into the request's header fields.
    func transfer(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        transport: any Transport
    ) async throws -> Response {
        guard let tracer else {
            return try await transport.execute(request, body: body, context: context)
        }
        let (traced, span, isRecording) = Self.startTransfer(request, context: context, tracer: tracer)
        do {
            let response = try await transport.execute(traced, body: body, context: context)
            Self.end(span, with: response, isRecording: isRecording)
            return response
        } catch {
            span.end(failingWith: error)
            throw error
        }
    }

    /// The span of one transfer, and the request carrying its trace context.
    @inline(never)
    private static func startTransfer(
        _ request: HTTPRequest,
        context: MiddlewareContext,
        tracer: any Tracer
    ) -> (request: HTTPRequest, span: any Span, isRecording: Bool) {
        let resends = context.transfers?.next() ?? 0
        let span = tracer.startSpan(
            HTTPClientSemantics.spanName(request.method),
            context: ServiceContext.current ?? .topLevel,
            ofKind: .client
        )
        let isRecording = span.isRecording
        if isRecording {
            let semantics = HTTPClientSemantics(request)
            span.updateAttributes { attributes in
                attributes.set(semantics, url: request)
                attributes["http.request.resend_count"] = resends
            }
        }
        var request = request
        tracer.inject(span.context, into: &request.headerFields, using: HTTPFieldsInjector())
        return (request, span, isRecording)
    }

    /// Ends a transfer's span with the outcome of its response.
    @inline(never)
    private static func end(_ span: any Span, with response: Response, isRecording: Bool) {
        let status = response.statusCode
        span.end(
            status: status,
            errorType: HTTPClientSemantics.errorType(status: status),
            version: HTTPClientSemantics.protocolVersion(response.metrics),
            isRecording: isRecording
        )
    }
}

/// Counts the transfers of one logical request, for `http.request.resend_count`.
final class TransferCount: Sendable {
    private let count = LockedBox(0)

    /// The number of transfers before this one.
    func next() -> Int {
        count.withLock { count in
            defer { count += 1 }
            return count
        }
    }
}

/// Writes trace context into request header fields.
struct HTTPFieldsInjector: Injector {
    private static let traceparent = HTTPField.Name("traceparent")!
    private static let tracestate = HTTPField.Name("tracestate")!

    func inject(_ value: String, forKey key: String, into fields: inout HTTPFields) {
        // The W3C names are the ones every propagator writes: no validation per request.
        let known = key == "traceparent" ? Self.traceparent : key == "tracestate" ? Self.tracestate : nil
        guard let name = known ?? HTTPField.Name(key) else { return }
        fields[name] = value
    }
}

extension HTTPClientSemantics {
    /// The span name the conventions give: the method, or `HTTP` for an unknown one.
    static func spanName(_ method: HTTPRequest.Method) -> String {
        let name = methodName(method)
        return name == "_OTHER" ? "HTTP" : name
    }
}

extension Span {
    /// Ends the span with the outcome of a response; its attributes only when it records.
    fileprivate func end(status: Int, errorType: String?, version: String?, isRecording: Bool) {
        if isRecording {
            updateAttributes { $0.set(status: status, errorType: errorType, version: version) }
        }
        if errorType != nil { setStatus(SpanStatus(code: .error)) }
        end()
    }

    /// Ends the span as failed: the error recorded, its `error.type` set, its status error.
    func end(failingWith error: any Error) {
        if isRecording {
            attributes["error.type"] = HTTPClientSemantics.errorType(error)
            recordError(error)
        }
        setStatus(SpanStatus(code: .error))
        end()
    }
}

extension SpanAttributes {
    /// Sets the request's attributes; never the query, the fragment or user information.
    fileprivate mutating func set(_ semantics: HTTPClientSemantics, url request: HTTPRequest) {
        self["http.request.method"] = semantics.method
        self["server.address"] = semantics.serverAddress
        self["server.port"] = semantics.serverPort
        self["url.full"] = HTTPClientSemantics.fullURL(request)
    }

    /// Sets the outcome's attributes.
    fileprivate mutating func set(status: Int, errorType: String?, version: String?) {
        self["http.response.status_code"] = status
        if let errorType { self["error.type"] = errorType }
        if let version { self["network.protocol.version"] = version }
    }
}
