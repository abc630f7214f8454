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
    func observe(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Middleware.Next
    ) async throws -> Response {
        let start = ContinuousClock.now
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
        do {
            let response: Response
            if let span {
                response = try await ServiceContext.withValue(span.context) {
                    try await next(request, body, context)
                }
            } else {
                response = try await next(request, body, context)
            }
            let status = response.statusCode
            let errorType = HTTPClientSemantics.errorType(status: status)
            let version = HTTPClientSemantics.protocolVersion(response.metrics)
            if let semantics {
                record(semantics, status: status, errorType: errorType, version: version, since: start)
            }
            span?.end(status: status, errorType: errorType, version: version, isRecording: isRecording)
            return response
        } catch {
            if let semantics {
                record(
                    semantics,
                    status: nil,
                    errorType: HTTPClientSemantics.errorType(error),
                    version: nil,
                    since: start
                )
            }
            span?.end(failingWith: error)
            throw error
        }
    }

    private func record(
        _ semantics: HTTPClientSemantics,
        status: Int?,
        errorType: String?,
        version: String?,
        since start: ContinuousClock.Instant
    ) {
        guard let metrics else { return }
        let elapsed = (ContinuousClock.now - start).components
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
            return try await transport.execute(request, body: body, options: context.options, control: context.control)
        }
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
        do {
            let response = try await transport.execute(
                request,
                body: body,
                options: context.options,
                control: context.control
            )
            let status = response.statusCode
            span.end(
                status: status,
                errorType: HTTPClientSemantics.errorType(status: status),
                version: HTTPClientSemantics.protocolVersion(response.metrics),
                isRecording: isRecording
            )
            return response
        } catch {
            span.end(failingWith: error)
            throw error
        }
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
