import Foundation
public import HTTPTypes
public import Logging

/// Sends HTTP requests through a middleware chain to a transport, and keeps the registry of
/// the tasks it runs.
///
/// ```swift
/// let session = Session(configuration: .init(baseURL: URL(string: "https://api.example.com")!))
/// let response = try await session.send(HTTPRequest(method: .get, path: "/status"))
/// print(response.status, response.data.count)
/// await session.shutdown()
/// ```
///
/// Relative requests are resolved against ``Configuration/baseURL``; a request whose path is
/// an absolute `http`/`https` URL goes to that URL, with the same checks. The session adds its
/// default header fields and the User-Agent, which the SDK owns: a request that sets
/// `User-Agent` itself is refused with ``CourierError/Kind/reservedHeader``.
///
/// ### Security comes from the transport
///
/// A session has no security setting of its own: it enforces the ``Transport/security`` of
/// its transport — the one object that makes connections, and so the one place trust is
/// configured. A session on a secured ``CurlTransport`` sends only HTTPS to trusted hosts and
/// refuses an `Authorization` field from the caller; see <doc:PinningAndTrust>.
///
/// ### Why an actor, and why sending never waits for it
///
/// The session's configuration is isolated state: ``reconfigure(_:)`` and ``shutdown()`` run
/// on the actor, one at a time. Each publishes an immutable snapshot — configuration, folded
/// middleware chain, User-Agent, whether the session is shut down — that ``send(_:body:deadline:logger:)``,
/// ``stream(_:body:deadline:logger:)`` and ``task(for:body:deadline:logger:)`` read under a short lock without
/// an actor hop, so concurrent callers never queue on the actor. A request keeps the snapshot
/// it started with.
public actor Session {
    /// The transport the session sends through.
    public nonisolated let transport: any Transport

    private nonisolated let ownsTransport: Bool
    private nonisolated let state: LockedBox<State>
    /// The retries the session may still make; it outlives reconfigurations.
    private nonisolated let retryBudget: RetryBudget
    /// What every error of this session records, when a layer above the core set it: the kind
    /// of request the session sends, say.
    nonisolated let errorTag: (any ErrorAttribute)?

    /// What the session publishes for requests, and the tasks it runs.
    private struct State {
        var snapshot: Snapshot
        var tasks: [NetworkTask.ID: NetworkTask] = [:]
        /// Requests that started and have not ended: every `send`, `stream` and task.
        var requestsInFlight = 0
        /// Who waits for ``requestsInFlight`` to reach zero, by ticket.
        var idleWaiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var nextTicket = 0
    }

    /// What one request needs from the session, immutable once published.
    private final class Snapshot: Sendable {
        let configuration: Configuration
        let pipeline: Middleware.Next
        let userAgent: String
        let base: BaseURL?
        let security: SecurityConfiguration
        let isShutDown: Bool
        /// Where the requests' metrics and spans go; `nil` when nowhere.
        let instruments: RequestInstruments?
        /// The last request prepared, and what it became; `nil` when the screen does more than
        /// look at the request (a debugger check runs for every request).
        let preparedRequests: PreparedRequestMemo?

        init(configuration: Configuration, transport: any Transport, isShutDown: Bool, retryBudget: RetryBudget) {
            self.configuration = configuration
            let instruments = RequestInstruments.resolve(configuration, transport: transport)
            self.instruments = instruments
            self.pipeline = Session.makePipeline(
                configuration,
                retryBudget: retryBudget,
                transport: transport,
                instruments: instruments
            )
            self.userAgent = configuration.userAgent
            self.base = configuration.baseURL.map(BaseURL.init)
            self.security = transport.security
            self.isShutDown = isShutDown
            self.preparedRequests = transport.security.detectsDebugger ? nil : PreparedRequestMemo()
        }
    }

    static let silentLogger = Logger(label: "courier.silent", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - configuration: Base URL, default fields, timeouts and middleware.
    ///   - transport: Where requests go, and the security they get. By default the session
    ///     creates an unpinned ``CurlTransport`` and shuts it down in ``shutdown()``; a
    ///     transport passed in is left running.
    public init(configuration: Configuration = Configuration(), transport: (any Transport)? = nil) {
        self.init(configuration: configuration, transport: transport, errorTag: nil)
    }

    /// Creates a session whose errors record `errorTag`; sessions that send to one gateway
    /// share one `retryBudget`, so the budget bounds the retries towards the gateway, not
    /// those of each session apart.
    init(
        configuration: Configuration,
        transport: (any Transport)?,
        errorTag: (any ErrorAttribute)?,
        retryBudget: RetryBudget = RetryBudget()
    ) {
        self.errorTag = errorTag
        self.ownsTransport = transport == nil
        let transport = transport ?? CurlTransport()
        self.transport = transport
        self.retryBudget = retryBudget
        self.state = LockedBox(
            State(
                snapshot: Snapshot(
                    configuration: configuration,
                    transport: transport,
                    isShutDown: false,
                    retryBudget: retryBudget
                )
            )
        )
    }

    /// Where this session's requests report metrics and spans; `nil` when nowhere.
    nonisolated var instruments: RequestInstruments? {
        state.withLock { $0.snapshot.instruments }
    }

    /// Whether the session refuses new requests.
    nonisolated var isShutDown: Bool {
        state.withLock { $0.snapshot.isShutDown }
    }

    /// The configuration requests start with now.
    public nonisolated var configuration: Configuration {
        state.withLock { $0.snapshot.configuration }
    }

    /// Changes the configuration for requests that start from now on; requests in flight keep
    /// the configuration they started with.
    ///
    /// ```swift
    /// await session.reconfigure { $0.defaultHeaderFields[.acceptLanguage] = "de" }
    /// ```
    ///
    /// - Parameter change: Changes a copy of the current configuration.
    public func reconfigure(_ change: (inout Configuration) -> Void) {
        var configuration = state.withLock { $0.snapshot.configuration }
        change(&configuration)
        let snapshot = Snapshot(
            configuration: configuration,
            transport: transport,
            isShutDown: false,
            retryBudget: retryBudget
        )
        state.withLock { state in
            guard !state.snapshot.isShutDown else { return }
            state.snapshot = snapshot
        }
    }

    /// Folds the middleware into one function, the first middleware outermost; redirects are
    /// followed innermost, right before the transport. With instruments, the whole chain runs
    /// in the request's span and metrics, and each transfer in a span of its own.
    private static func makePipeline(
        _ configuration: Configuration,
        retryBudget: RetryBudget,
        transport: any Transport,
        instruments: RequestInstruments?
    ) -> Middleware.Next {
        if let instruments {
            return makeObservedPipeline(configuration, retryBudget: retryBudget, transport: transport, instruments)
        }
        let redirects = RedirectMiddleware(security: transport.security, approval: configuration.shouldFollowRedirect)
        let step: Middleware.Next
        if let cookies = SessionCookies(configuration, security: transport.security) {
            step = innermost(transport, redirects: redirects, cookies: cookies)
        } else {
            step = innermost(transport, redirects: redirects)
        }
        return fold(configuration.middlewares(retryBudget: retryBudget, security: transport.security), around: step)
    }

    /// The transport call and the redirect check in one frame; only a redirect goes further.
    ///
    /// The steps of the chain are closures made here and in ``fold(_:around:)``, outside any
    /// generic context, and call the default transport and the session's retry step directly:
    /// a closure made inside a generic function is entered through a reabstraction thunk, an
    /// existential through a witness thunk, and in an async call each thunk is one more frame
    /// that every request in flight keeps.
    private static func innermost(_ transport: any Transport, redirects: RedirectMiddleware) -> Middleware.Next {
        if let curl = transport as? CurlTransport {
            return { request, body, context in
                try await transfer(request, body: body, context: context, over: curl, redirects: redirects)
            }
        }
        return { request, body, context in
            try await transfer(request, body: body, context: context, over: transport, redirects: redirects)
        }
    }

    /// ``innermost(_:redirects:)`` for a session with cookies: each transfer, the first and
    /// every redirect hop, goes through `cookies`, and the redirect logic sees the requests
    /// without the jar's cookies. Made only when the session keeps cookies, so a session
    /// without them runs the plain step.
    private static func innermost(
        _ transport: any Transport,
        redirects: RedirectMiddleware,
        cookies: SessionCookies
    ) -> Middleware.Next {
        let send: Middleware.Next
        if let curl = transport as? CurlTransport {
            send = { request, body, context in
                try await cookies.transfer(request, body: body, context: context, over: curl)
            }
        } else {
            send = { request, body, context in
                try await cookies.transfer(request, body: body, context: context, over: transport)
            }
        }
        return { request, body, context in
            let response = try await send(request, body, context)
            guard RedirectMiddleware.isRedirect(response, options: context.options) else { return response }
            return try await redirects.follow(response, of: request, body: body, context: context, send: send)
        }
    }

    /// Sends `request` over `transport`, following a redirect response as `redirects` allows.
    @inline(__always)
    private static func transfer<T: Transport>(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        over transport: T,
        redirects: RedirectMiddleware
    ) async throws -> Response {
        let response = try await transport.execute(request, body: body, context: context)
        guard RedirectMiddleware.isRedirect(response, options: context.options) else { return response }
        return try await follow(
            response,
            of: request,
            body: body,
            context: context,
            over: transport,
            redirects: redirects
        )
    }

    /// Follows the redirect `response` of `request` over `transport`. Never inlined: the call
    /// and its closure stay out of the async frame of ``transfer(_:body:context:over:redirects:)``,
    /// which every request in flight keeps.
    @inline(never)
    private static func follow<T: Transport>(
        _ response: Response,
        of request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        over transport: T,
        redirects: RedirectMiddleware
    ) async throws -> Response {
        try await redirects.follow(response, of: request, body: body, context: context) { request, body, context in
            try await transport.execute(request, body: body, context: context)
        }
    }

    /// Wraps `innermost` in `middlewares`, the first outermost.
    private static func fold(
        _ middlewares: [any Middleware],
        around innermost: @escaping Middleware.Next
    )
        -> Middleware.Next
    {
        var next = innermost
        for middleware in middlewares.reversed() {
            let tail = next
            if let retry = middleware as? RetryMiddleware {
                next = { request, body, context in
                    try await retry.intercept(request, body: body, context: context, next: tail)
                }
            } else if let cache = middleware as? CacheMiddleware {
                next = { request, body, context in
                    try await cache.intercept(request, body: body, context: context, escapingNext: tail)
                }
            } else {
                next = { request, body, context in
                    try await middleware.intercept(request, body: body, context: context, next: tail)
                }
            }
        }
        return next
    }

    /// The pipeline of ``makePipeline(_:retryBudget:transport:instruments:)`` with metrics and
    /// spans: kept apart so that a session without them runs the plain one.
    private static func makeObservedPipeline(
        _ configuration: Configuration,
        retryBudget: RetryBudget,
        transport: any Transport,
        _ instruments: RequestInstruments
    ) -> Middleware.Next {
        let transfer: Middleware.Next = { request, body, context in
            try await instruments.transfer(request, body: body, context: context, transport: transport)
        }
        let send: Middleware.Next
        if let cookies = SessionCookies(configuration, security: transport.security) {
            send = { request, body, context in
                try await cookies.exchange(request, body: body, context: context, send: transfer)
            }
        } else {
            send = transfer
        }
        let redirects = RedirectMiddleware(security: transport.security, approval: configuration.shouldFollowRedirect)
        let metrics = instruments.metrics != nil ? RequestInstruments.metricsFactory(of: configuration) : nil
        let chain = fold(
            configuration.middlewares(
                retryBudget: retryBudget,
                metrics: metrics.map(RetryMetrics.init(factory:)),
                security: transport.security
            ),
            around: { request, body, context in
                try await redirects.intercept(request, body: body, context: context, next: send)
            }
        )
        return { request, body, context in
            try await instruments.observe(request, body: body, context: context, next: chain)
        }
    }

    /// Sends a request and returns its response with the body in memory.
    ///
    /// Any status is a response, not an error: check ``Response/isSuccessful``.
    /// Cancelling the calling task cancels the transfer.
    ///
    /// ```swift
    /// let response = try await session.send(HTTPRequest(method: .get, path: "/status"), deadline: .now + .seconds(2))
    /// ```
    ///
    /// - Parameters:
    ///   - request: The request; relative to the base URL when it has no scheme and authority.
    ///   - body: The request body.
    ///   - deadline: When the whole response must be there; `nil` for the session's
    ///     ``Configuration/timeout`` from now. A service passes on the deadline of its own work.
    ///   - logger: Where middleware logs for this request; nothing is logged by default.
    /// - Returns: The response.
    /// - Throws: ``CourierError`` when the request is refused before sending or the transfer
    ///   fails (``CourierError/Kind/timedOut`` past the deadline), `CancellationError` when
    ///   cancelled.
    public nonisolated func send(
        _ request: HTTPRequest,
        body: RequestBody? = nil,
        deadline: ContinuousClock.Instant? = nil,
        logger: Logger? = nil
    ) async throws -> Response {
        let endpoint = ResponseEndpoint(of: request)
        return try await send(request, body: body, endpoint: endpoint, deadline: deadline, logger: logger)
    }

    /// The response of a request that ended, with its endpoint; the request counted out.
    @inline(never)
    private nonisolated func ended(_ response: Response, endpoint: ResponseEndpoint) -> Response {
        requestEnded()
        var response = response
        response.endpoint = endpoint
        return response
    }

    /// What the failure of a request that ended becomes; the request counted out.
    @inline(never)
    private nonisolated func ended(_ error: any Error, endpoint: ResponseEndpoint) -> any Error {
        requestEnded()
        return failure(error, method: endpoint.method, target: endpoint.target)
    }

    /// The context a request of ``send(_:body:deadline:logger:)`` or ``stream(_:body:deadline:logger:)`` starts
    /// with; made apart so that its parts stay out of the caller's async frame.
    @inline(never)
    private static func context(
        of snapshot: Snapshot,
        logger: Logger?,
        deadline: ContinuousClock.Instant? = nil,
        retryPolicy: RetryPolicy? = nil,
        delivery: ResponseDelivery = .buffered,
        attributes: RequestAttributes = RequestAttributes()
    ) -> MiddlewareContext {
        var options = snapshot.configuration.transferOptions(deadline: deadline)
        delivery.apply(to: &options, bufferBytes: snapshot.configuration.streamBufferSize)
        return MiddlewareContext(
            taskID: .next(),
            logger: logger ?? silentLogger,
            options: options,
            control: .none,
            retryPolicy: retryPolicy,
            attributes: attributes
        )
    }

    /// Sends a request with the endpoint a ``ResourceRequest`` names, buffered or streamed.
    ///
    /// Only the endpoint is kept across the await besides what the chain is called with, and the
    /// work before and after it is done by functions of their own: a request's frames live in
    /// its task's allocator, whose slabs hold ≈ 1 KB, and every request in flight holds a slab
    /// for each frame that does not fit the rest of the last.
    nonisolated func send(
        _ request: HTTPRequest,
        body: RequestBody?,
        endpoint: ResponseEndpoint,
        deadline: ContinuousClock.Instant? = nil,
        retryPolicy: RetryPolicy? = nil,
        delivery: ResponseDelivery = .buffered,
        attributes: RequestAttributes = RequestAttributes(),
        logger: Logger?
    ) async throws -> Response {
        let snapshot = startRequest()
        do {
            let response = try await snapshot.pipeline(
                try prepare(request, snapshot: snapshot),
                body,
                Self.context(
                    of: snapshot,
                    logger: logger,
                    deadline: deadline,
                    retryPolicy: retryPolicy,
                    delivery: delivery,
                    attributes: attributes
                )
            )
            return ended(response, endpoint: endpoint)
        } catch {
            throw ended(error, endpoint: endpoint)
        }
    }

    /// What a request's failure becomes: a ``CourierError`` learns the request's endpoint and
    /// the session's ``errorTag``.
    @inline(never)
    nonisolated func failure(_ error: any Error, method: HTTPRequest.Method, target: String) -> any Error {
        guard let error = error as? CourierError else { return error }
        return tagged(error.with(endpoint: ResponseEndpoint(method: method, target: target).description))
    }

    /// The error with this session's ``errorTag`` recorded, when it has one: the one place
    /// where the errors of a session learn what the layer that made it wants them to say (which
    /// kind of request failed, say).
    nonisolated func tagged(_ error: any Error) -> any Error {
        guard let errorTag, let error = error as? CourierError else { return error }
        return error.recording(errorTag)
    }

    /// Sends a request and returns as soon as the response head arrives; the body streams.
    ///
    /// Iterate ``Response/body`` for the chunks. While the consumer is behind, the transfer
    /// pauses, so memory stays flat however large the body. Dropping the body before its
    /// end cancels the transfer.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - body: The request body.
    ///   - deadline: When the response head must be there; `nil` for the session's
    ///     ``Configuration/timeout`` from now. The body is bounded by the stall timeout instead,
    ///     so a long download is not cut off while it moves.
    ///   - logger: Where middleware logs for this request.
    /// - Returns: The response with a streamed body.
    /// - Throws: As ``send(_:body:deadline:logger:)``.
    public nonisolated func stream(
        _ request: HTTPRequest,
        body: RequestBody? = nil,
        deadline: ContinuousClock.Instant? = nil,
        logger: Logger? = nil
    ) async throws -> Response {
        let endpoint = ResponseEndpoint(of: request)
        return try await send(
            request,
            body: body,
            endpoint: endpoint,
            deadline: deadline,
            delivery: .streamed,
            logger: logger
        )
    }

    /// Starts an observable task for a request.
    ///
    /// The task starts at once. A request the session refuses yields a task that has
    /// already completed with the ``CourierError``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - body: The request body.
    ///   - deadline: When the whole response must be there; `nil` for the session's
    ///     ``Configuration/timeout`` from now.
    ///   - logger: Where middleware logs for this request.
    /// - Returns: The running task.
    public nonisolated func task(
        for request: HTTPRequest,
        body: RequestBody? = nil,
        deadline: ContinuousClock.Instant? = nil,
        logger: Logger? = nil
    ) -> NetworkTask {
        task(for: request, body: body, deadline: deadline, retryPolicy: nil, logger: logger)
    }

    /// Starts an observable task that must have its response by `deadline`, carrying the
    /// `attributes` a layer above the core attached to the request.
    nonisolated func task(
        for request: HTTPRequest,
        body: RequestBody?,
        deadline: ContinuousClock.Instant?,
        retryPolicy: RetryPolicy?,
        attributes: RequestAttributes = RequestAttributes(),
        logger: Logger?
    ) -> NetworkTask {
        let task = NetworkTask.make(request: request)
        let snapshot = state.withLock { state -> Snapshot in
            if !state.snapshot.isShutDown { state.tasks[task.id] = task }
            state.requestsInFlight += 1
            return state.snapshot
        }
        var options = snapshot.configuration.transferOptions(deadline: deadline)
        options.reportsProgress = true
        let context = MiddlewareContext(
            taskID: task.id,
            logger: logger ?? Self.silentLogger,
            options: options,
            control: task.control,
            retryPolicy: retryPolicy,
            attributes: attributes
        )
        let endpoint = ResponseEndpoint(of: request)
        task.start { [self] in
            defer {
                _ = state.withLock { $0.tasks.removeValue(forKey: task.id) }
                requestEnded()
            }
            do {
                var response = try await snapshot.pipeline(try prepare(request, snapshot: snapshot), body, context)
                response.endpoint = endpoint
                return response
            } catch {
                throw failure(error, method: endpoint.method, target: endpoint.target)
            }
        }
        return task
    }

    /// The tasks started with ``task(for:body:deadline:logger:)`` that have not ended.
    public nonisolated var activeTasks: [NetworkTask] {
        state.withLock { Array($0.tasks.values) }
    }

    /// Cancels every active task and, when the session created its transport, shuts the
    /// transport down. Later requests fail with ``CourierError/Kind/shutDown``.
    public func shutdown() async {
        let tasks = state.withLock { state -> [NetworkTask] in
            refuseNewRequests(&state)
            return Array(state.tasks.values)
        }
        for task in tasks { task.cancel() }
        if ownsTransport { await transport.shutdown() }
    }

    /// Refuses new requests at once, lets the requests in flight finish for up to
    /// `gracePeriod`, then shuts down as ``shutdown()`` does, cancelling the rest.
    ///
    /// New requests fail with ``CourierError/Kind/shutDown`` from the moment this is called.
    /// Past the grace period, tasks are cancelled and, when the session created its transport,
    /// the transport is shut down, which fails every transfer still running; requests on a
    /// transport passed in end when their callers cancel them.
    ///
    /// - Parameter gracePeriod: The longest the requests in flight may still take.
    public func shutdown(gracePeriod: Duration) async {
        state.withLock { refuseNewRequests(&$0) }
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.untilIdle() }
            group.addTask { try? await Task.sleep(for: gracePeriod) }
            await group.next()
            group.cancelAll()
        }
        await shutdown()
    }

    /// Publishes a snapshot that fails every new request.
    private nonisolated func refuseNewRequests(_ state: inout State) {
        let current = state.snapshot
        guard !current.isShutDown else { return }
        state.snapshot = Snapshot(
            configuration: current.configuration,
            transport: transport,
            isShutDown: true,
            retryBudget: retryBudget
        )
    }

    /// The snapshot a request starts with, the request counted in flight.
    @inline(never)
    private nonisolated func startRequest() -> Snapshot {
        state.withLock { state in
            state.requestsInFlight += 1
            return state.snapshot
        }
    }

    /// Counts a request out, and wakes whoever waits for none to be in flight.
    @inline(never)
    private nonisolated func requestEnded() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.requestsInFlight -= 1
            guard state.requestsInFlight == 0, !state.idleWaiters.isEmpty else { return [] }
            defer { state.idleWaiters = [:] }
            return Array(state.idleWaiters.values)
        }
        for waiter in waiters { waiter.resume() }
    }

    /// Returns when no request is in flight, or when the calling task is cancelled.
    private nonisolated func untilIdle() async {
        let ticket = state.withLock { state in
            defer { state.nextTicket += 1 }
            return state.nextTicket
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let waits = state.withLock { state in
                    guard state.requestsInFlight > 0, !Task.isCancelled else { return false }
                    state.idleWaiters[ticket] = continuation
                    return true
                }
                if !waits { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.idleWaiters.removeValue(forKey: ticket) }?.resume()
        }
    }

    /// Resolves a request against the base URL, adds the session's header fields, and runs
    /// the security screen.
    ///
    /// A request equal to the last one prepared is not prepared again: it gets the same result
    /// (``PreparedRequestMemo``).
    private nonisolated func prepare(_ request: HTTPRequest, snapshot: Snapshot) throws -> HTTPRequest {
        if snapshot.isShutDown { throw CourierError.shutDown() }
        guard let memo = snapshot.preparedRequests else { return try Self.prepare(request, snapshot: snapshot) }
        if let prepared = memo.prepared(for: request) { return prepared }
        let prepared = try Self.prepare(request, snapshot: snapshot)
        memo.remember(prepared, for: request)
        return prepared
    }

    /// ``prepare(_:snapshot:)`` itself.
    private static func prepare(_ request: HTTPRequest, snapshot: Snapshot) throws -> HTTPRequest {
        var request = request
        if request.headerFields[.userAgent] != nil {
            throw CourierError.reservedHeader(
                "User-Agent is owned by Courier; set Session.Configuration.applicationProduct instead"
            )
        }
        if request.authority == nil {
            guard request.scheme == nil else {
                throw CourierError.invalidURL("the request has a scheme but no authority")
            }
            // A path that does not start with `/` and names a scheme and authority is an
            // absolute URL: it goes there, after the same checks as a resource request's.
            if let path = request.path, !path.hasPrefix("/"), path.contains("://") {
                let target = try RequestTarget(path)
                request.scheme = target.scheme
                request.authority = target.authority
                request.path = target.pathAndQuery
            } else {
                guard let base = snapshot.base else {
                    throw CourierError.invalidURL(
                        "the request for \(ErrorText.path(of: request.path ?? "/")) is relative and the session has "
                            + "no base URL"
                    )
                }
                try base.resolve(&request)
            }
        }
        switch request.scheme {
        case "https", "http": break
        case let scheme? where scheme.lowercased() == "https" || scheme.lowercased() == "http":
            request.scheme = scheme.lowercased()
        default:
            throw CourierError.invalidURL(
                "only http and https URLs are supported, not \(ErrorText.sanitized(request.scheme ?? "none", limit: 16))"
            )
        }
        for field in snapshot.configuration.defaultHeaderFields where request.headerFields[field.name] == nil {
            request.headerFields.append(field)
        }
        try snapshot.security.screen(request)
        request.headerFields.append(HTTPField(name: .userAgent, value: snapshot.userAgent))
        return request
    }

    /// The parts of the base URL that relative requests take, computed once.
    private struct BaseURL: Sendable {
        let scheme: String?
        let authority: String?
        let pathPrefix: String
        /// The URL as an error names it (``ErrorText/url(_:)``).
        let text: String

        init(_ url: URL) {
            text = ErrorText.url(url)
            scheme = url.scheme?.lowercased()
            authority = Authority(url: url)?.description
            var prefix = url.path
            if prefix.hasSuffix("/") { prefix.removeLast() }
            pathPrefix = prefix
        }

        func resolve(_ request: inout HTTPRequest) throws {
            guard let scheme, let authority else {
                throw CourierError.invalidURL(
                    "the base URL \(text) has no scheme or no host Courier accepts (a host name, a dotted IPv4 "
                        + "address, or an IPv6 address without a zone)"
                )
            }
            let relative = request.path ?? "/"
            request.scheme = scheme
            request.authority = authority
            if !pathPrefix.isEmpty || !relative.hasPrefix("/") {
                request.path = relative.hasPrefix("/") ? pathPrefix + relative : pathPrefix + "/" + relative
            }
        }
    }
}
