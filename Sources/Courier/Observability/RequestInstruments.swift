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
    func observe(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Middleware.Next
    ) async throws -> Response {
        let semantics = HTTPClientSemantics(request)
        let start = ContinuousClock.now
        metrics?.sampleTransport()
        var context = context
        context.transfers = TransferCount()
        let span = tracer.map { tracer -> any Span in
            let span = tracer.startSpan(
                semantics.spanName,
                context: ServiceContext.current ?? .topLevel,
                ofKind: .client
            )
            span.attributes.set(semantics, url: request)
            return span
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
            record(semantics, status: status, errorType: errorType, version: version, since: start)
            if let span {
                span.attributes.set(status: status, errorType: errorType, version: version)
                if errorType != nil { span.setStatus(SpanStatus(code: .error)) }
                span.end()
            }
            return response
        } catch {
            record(semantics, status: nil, errorType: HTTPClientSemantics.errorType(error), version: nil, since: start)
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
        let semantics = HTTPClientSemantics(request)
        let resends = context.transfers?.next() ?? 0
        let span = tracer.startSpan(semantics.spanName, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span.attributes.set(semantics, url: request)
        span.attributes["http.request.resend_count"] = resends
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
            let errorType = HTTPClientSemantics.errorType(status: status)
            span.attributes.set(
                status: status,
                errorType: errorType,
                version: HTTPClientSemantics.protocolVersion(response.metrics)
            )
            if errorType != nil { span.setStatus(SpanStatus(code: .error)) }
            span.end()
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
    func inject(_ value: String, forKey key: String, into fields: inout HTTPFields) {
        guard let name = HTTPField.Name(key) else { return }
        fields[name] = value
    }
}

extension HTTPClientSemantics {
    /// The span name the conventions give: the method, or `HTTP` for an unknown one.
    var spanName: String { method == "_OTHER" ? "HTTP" : method }
}

extension Span {
    /// Ends the span as failed: the error recorded, its `error.type` set, its status error.
    func end(failingWith error: any Error) {
        attributes["error.type"] = HTTPClientSemantics.errorType(error)
        recordError(error)
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
