public import CoreMetrics
public import Foundation
public import HTTPTypes
public import Tracing

extension Session {
    /// What a ``Session`` does with every request: where relative requests go, which header
    /// fields they carry, how long they may take, and the middleware they pass through.
    public struct Configuration: Sendable {
        /// The URL that relative requests are resolved against: its scheme, authority and
        /// path prefix. `nil` means every request must be absolute.
        public var baseURL: URL?
        /// Header fields added to every request that does not set them itself.
        public var defaultHeaderFields: HTTPFields
        /// The application's product token that opens the User-Agent, such as `"App/1.2"`.
        public var applicationProduct: String?
        /// The longest a connection may take to establish; past it a request fails with
        /// ``CourierError/Kind/connectTimedOut``.
        public var connectTimeout: Duration?
        /// The longest a request may take until its response is there, or `nil` for no limit:
        /// every attempt, the waits between them and every redirect included; the whole body
        /// of a buffered response, the head of a streamed one. Past it a request fails with
        /// ``CourierError/Kind/timedOut``. A ``ResourceRequest/deadline`` replaces it.
        public var timeout: Duration?
        /// The longest a transfer may move no byte in either direction once its response head
        /// has arrived, or `nil` for no limit; past it the request fails with
        /// ``CourierError/Kind/stalled``. This, not ``timeout``, bounds the body of a streamed
        /// response, so a long download is not cut off while it moves; a stream paused because
        /// its consumer is behind is not stalled. Before the head, only a request body that stops
        /// going out stalls (the server stopped reading it); once the request is sent,
        /// ``timeout`` alone bounds the wait, so a server that takes long to answer is not taken
        /// for a stalled one.
        public var stallTimeout: Duration?
        /// The most redirects followed; `0` hands every redirect response to the caller.
        /// Redirects never go from HTTPS to HTTP and never carry credentials to another origin;
        /// see <doc:RetriesRedirectsAndTimeouts>.
        public var maximumRedirects: Int
        /// Asked before each redirect is followed, with the redirect response and the request
        /// Courier would send next (method, body and credentials already as the rules make
        /// them): return `false` to hand the redirect response to the caller instead, or throw
        /// to fail the request with that error. `nil` follows every redirect the rules allow.
        ///
        /// ```swift
        /// configuration.shouldFollowRedirect = { _, next in next.authority == "api.example.com" }
        /// ```
        public var shouldFollowRedirect: (@Sendable (HTTPResponse, HTTPRequest) throws -> Bool)?
        /// The largest response body ``Session/send(_:body:deadline:logger:)`` buffers.
        public var maximumResponseBodySize: Int
        /// How many unread bytes a streamed response may hold before the transfer pauses.
        public var streamBufferSize: Int
        /// The middleware, outermost first: the first sees each request first and each
        /// response last.
        ///
        /// The session adds its retry step (``retryPolicy``) after the `LoggingMiddleware`s
        /// this list starts with, so the order is logging, retry, then the rest: each of
        /// these sees every attempt, the logging one request.
        public var middlewares: [any Middleware]
        /// When requests are sent again after a failure or a status such as 503
        /// (``RetryPolicy/default``); a ``ResourceRequest/retryPolicy`` replaces it for one
        /// request. ``RetryPolicy/never`` sends every request once.
        public var retryPolicy: RetryPolicy
        /// Where the session's metrics go (see <doc:Observability>), or `nil` for the factory the
        /// application bootstrapped with `MetricsSystem.bootstrap`. With swift-metrics' default
        /// no-op factory the session records nothing and pays nothing for metrics.
        public var metricsFactory: (any MetricsFactory)?
        /// Where the session's spans go, and which trace context its requests carry, or `nil`
        /// for the tracer the application bootstrapped with `InstrumentationSystem.bootstrap`.
        /// With the default no-op tracer the session creates no spans and injects nothing.
        public var tracer: (any Tracer)?
        /// The jar that keeps the cookies servers set and sends them back, or `nil` (the
        /// default) for no cookies at all: no `Cookie` field added, no `Set-Cookie` stored.
        ///
        /// Cookies are opt-in because a session is often shared by unrelated calls, whose
        /// cookies should not mix. With a jar, every transfer — each redirect hop too — carries
        /// the jar's cookies for its URL (after a `Cookie` field of the caller's own), and each
        /// response's `Set-Cookie` fields go into the jar. A hop to another origin carries only
        /// the cookies of its own URL. On a secured transport cookies go only to hosts the
        /// trust policies cover. See ``CookieJar``.
        public var cookieJar: CookieJar?
        /// Picks the jar of one request, for a layer above that keeps one jar per user; when
        /// set, its answer replaces ``cookieJar`` (`nil`: the request has no cookies).
        var cookieJarOfRequest: (@Sendable (MiddlewareContext) -> CookieJar?)?
        /// How long ``Session/shutdown(gracePeriod:)``, when run as a service, lets requests in
        /// flight finish before cancelling them (10 seconds by default).
        public var shutdownGracePeriod: Duration
        /// Where responses are stored and served from (see ``HTTPCache``), or `nil` for no cache
        /// (the default): every request then goes to the network and pays nothing for caching.
        public var cache: HTTPCache?
        /// The cache partition of a request, when a layer above the core decides it (a user's,
        /// say); `nil`, or a rule that returns `nil`, chooses it from the request's credential
        /// fields.
        var cachePartitionOfRequest: (@Sendable (HTTPRequest, MiddlewareContext) -> CachePartition?)?

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - baseURL: Where relative requests go.
        ///   - defaultHeaderFields: Fields added to every request.
        ///   - applicationProduct: The product token that opens the User-Agent.
        ///   - connectTimeout: The connect timeout (10 seconds by default).
        ///   - timeout: The longest a request may take until its response is there (60 seconds
        ///     by default).
        ///   - stallTimeout: The longest a transfer may move no byte (30 seconds by default).
        ///   - maximumRedirects: The most redirects followed (5 by default).
        ///   - maximumResponseBodySize: The largest buffered body (128 MiB by default).
        ///   - streamBufferSize: The unread bytes a stream holds before pausing (1 MiB).
        ///   - middlewares: The middleware chain, outermost first.
        public init(
            baseURL: URL? = nil,
            defaultHeaderFields: HTTPFields = [:],
            applicationProduct: String? = nil,
            connectTimeout: Duration? = .seconds(10),
            timeout: Duration? = .seconds(60),
            stallTimeout: Duration? = .seconds(30),
            maximumRedirects: Int = 5,
            maximumResponseBodySize: Int = 128 << 20,
            streamBufferSize: Int = 1 << 20,
            middlewares: [any Middleware] = []
        ) {
            self.baseURL = baseURL
            self.defaultHeaderFields = defaultHeaderFields
            self.applicationProduct = applicationProduct
            self.connectTimeout = connectTimeout
            self.timeout = timeout
            self.stallTimeout = stallTimeout
            self.maximumRedirects = maximumRedirects
            self.shouldFollowRedirect = nil
            self.maximumResponseBodySize = maximumResponseBodySize
            self.streamBufferSize = streamBufferSize
            self.middlewares = middlewares
            self.retryPolicy = .default
            self.metricsFactory = nil
            self.tracer = nil
            self.shutdownGracePeriod = .seconds(10)
            self.cookieJar = nil
            self.cookieJarOfRequest = nil
            self.cache = nil
            self.cachePartitionOfRequest = nil
        }

        /// The User-Agent every request carries:
        /// `App/1.2 Courier/0.4.0 (Linux; x86_64) libcurl/7.88.1`.
        public var userAgent: String {
            let sdk =
                "Courier/\(CourierLibrary.version) (\(CourierLibrary.platform)) libcurl/\(CurlTransport.libcurlVersion)"
            guard let applicationProduct, !applicationProduct.isEmpty else { return sdk }
            return "\(applicationProduct) \(sdk)"
        }

        /// The transfer options of a request that starts now, with `deadline` or, when it has
        /// none, ``timeout`` from now.
        func transferOptions(deadline: ContinuousClock.Instant? = nil) -> TransferOptions {
            TransferOptions(
                responseBody: .buffered(maximumBytes: maximumResponseBodySize),
                connectTimeout: connectTimeout,
                deadline: deadline ?? timeout.map { .now + $0 },
                stallTimeout: stallTimeout,
                maximumRedirects: maximumRedirects
            )
        }
    }
}
