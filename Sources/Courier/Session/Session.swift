import Foundation
public import HTTPTypes
public import Logging
import Synchronization

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
/// Relative requests are resolved against ``Configuration/baseURL``. The session adds its
/// default header fields and the User-Agent, which the SDK owns: a request that sets
/// `User-Agent` itself is refused with ``SessionError``.
///
/// Sending never waits for the actor: configuration and middleware are immutable, and the
/// registry of live tasks is guarded by a lock, so concurrent callers do not queue on it.
public actor Session {
    /// The configuration the session was created with.
    public nonisolated let configuration: Configuration
    /// The transport the session sends through.
    public nonisolated let transport: any Transport

    private nonisolated let pipeline: Middleware.Next
    private nonisolated let ownsTransport: Bool
    private nonisolated let userAgent: String
    private nonisolated let registry = LockedBox<Registry>(Registry())
    private nonisolated let isShutDown = Atomic<Bool>(false)
    private nonisolated let base: BaseURL?

    private struct Registry {
        var tasks: [NetworkTask.ID: NetworkTask] = [:]
        var isShutDown = false
    }

    static let silentLogger = Logger(label: "courier.silent", factory: { _ in SwiftLogNoOpLogHandler() })

    /// Creates a session.
    ///
    /// - Parameters:
    ///   - configuration: Base URL, default fields, timeouts and middleware.
    ///   - transport: Where requests go. By default the session creates a ``CurlTransport``
    ///     and shuts it down in ``shutdown()``; a transport passed in is left running.
    public init(configuration: Configuration = Configuration(), transport: (any Transport)? = nil) {
        self.configuration = configuration
        self.ownsTransport = transport == nil
        let transport = transport ?? CurlTransport(configuration: .init(security: configuration.security))  // Security
        self.transport = transport
        self.userAgent = configuration.userAgent
        self.base = configuration.baseURL.map(BaseURL.init)
        self.pipeline = Self.makePipeline(configuration.middlewares, transport: transport)
    }

    /// Folds the middleware into one function, the first middleware outermost.
    private static func makePipeline(_ middlewares: [any Middleware], transport: any Transport) -> Middleware.Next {
        var next: Middleware.Next = { request, body, context in
            try await transport.execute(request, body: body, options: context.options, control: context.control)
        }
        for middleware in middlewares.reversed() {
            let tail = next
            next = { request, body, context in
                try await middleware.intercept(request, body: body, context: context, next: tail)
            }
        }
        return next
    }

    /// Sends a request and returns its response with the body in memory.
    ///
    /// Any status is a response, not an error: check ``Response/isSuccessful``.
    /// Cancelling the calling task cancels the transfer.
    ///
    /// - Parameters:
    ///   - request: The request; relative to the base URL when it has no scheme and authority.
    ///   - body: The request body.
    ///   - logger: Where middleware logs for this request; nothing is logged by default.
    /// - Returns: The response.
    /// - Throws: ``SessionError`` when the request is refused before sending,
    ///   ``TransportError`` when the transfer fails, `CancellationError` when cancelled.
    public nonisolated func send(
        _ request: HTTPRequest,
        body: RequestBody? = nil,
        logger: Logger? = nil
    ) async throws -> Response {
        let request = try prepare(request)
        let context = MiddlewareContext(
            taskID: .next(),
            logger: logger ?? Self.silentLogger,
            options: configuration.transferOptions,
            control: .none
        )
        return try await pipeline(request, body, context)
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
    ///   - logger: Where middleware logs for this request.
    /// - Returns: The response with a streamed body.
    /// - Throws: As ``send(_:body:logger:)``.
    public nonisolated func stream(
        _ request: HTTPRequest,
        body: RequestBody? = nil,
        logger: Logger? = nil
    ) async throws -> Response {
        let request = try prepare(request)
        var options = configuration.transferOptions
        options.responseBody = .streamed(bufferBytes: configuration.streamBufferSize)
        let context = MiddlewareContext(
            taskID: .next(),
            logger: logger ?? Self.silentLogger,
            options: options,
            control: .none
        )
        return try await pipeline(request, body, context)
    }

    /// Starts an observable task for a request.
    ///
    /// The task starts at once. A request the session refuses yields a task that has
    /// already completed with the ``SessionError``.
    ///
    /// - Parameters:
    ///   - request: The request.
    ///   - body: The request body.
    ///   - logger: Where middleware logs for this request.
    /// - Returns: The running task.
    public nonisolated func task(
        for request: HTTPRequest,
        body: RequestBody? = nil,
        logger: Logger? = nil
    ) -> NetworkTask {
        let task = NetworkTask.make(request: request)
        var options = configuration.transferOptions
        options.reportsProgress = true
        let context = MiddlewareContext(
            taskID: task.id,
            logger: logger ?? Self.silentLogger,
            options: options,
            control: task.control
        )
        let accepted = registry.withLock { registry -> Bool in
            guard !registry.isShutDown else { return false }
            registry.tasks[task.id] = task
            return true
        }
        let pipeline = self.pipeline
        task.start { [self] in
            defer { _ = registry.withLock { $0.tasks.removeValue(forKey: task.id) } }
            guard accepted else { throw SessionError.shutDown }
            let request = try prepare(request)
            return try await pipeline(request, body, context)
        }
        return task
    }

    /// The tasks started with ``task(for:body:logger:)`` that have not ended.
    public nonisolated var activeTasks: [NetworkTask] {
        registry.withLock { Array($0.tasks.values) }
    }

    /// Cancels every active task and, when the session created its transport, shuts the
    /// transport down. Later requests fail with ``SessionError/shutDown``.
    public func shutdown() async {
        isShutDown.store(true, ordering: .releasing)
        let tasks = registry.withLock { registry -> [NetworkTask] in
            registry.isShutDown = true
            return Array(registry.tasks.values)
        }
        for task in tasks { task.cancel() }
        if ownsTransport { await transport.shutdown() }
    }

    /// Resolves a request against the base URL and adds the session's header fields.
    nonisolated func prepare(_ request: HTTPRequest) throws -> HTTPRequest {
        if isShutDown.load(ordering: .acquiring) { throw SessionError.shutDown }
        var request = request
        if request.headerFields[.userAgent] != nil {
            throw SessionError.invalidHeader(
                "User-Agent is owned by Courier; set Session.Configuration.applicationProduct instead"
            )
        }
        if request.authority == nil {
            guard request.scheme == nil else {
                throw SessionError.invalidURL("the request has a scheme but no authority")
            }
            guard let base else {
                throw SessionError.invalidURL(
                    "the request \(request.path ?? "") is relative and the session has no base URL"
                )
            }
            try base.resolve(&request)
        }
        switch request.scheme {
        case "https", "http": break
        case let scheme? where scheme.lowercased() == "https" || scheme.lowercased() == "http":
            request.scheme = scheme.lowercased()
        default:
            throw SessionError.invalidURL("only http and https URLs are supported, not \(request.scheme ?? "none")")
        }
        for field in configuration.defaultHeaderFields where request.headerFields[field.name] == nil {
            request.headerFields.append(field)
        }
        try configuration.security.screen(request, transport: transport)  // Security: SecurityConfiguration+Screening.swift
        request.headerFields.append(HTTPField(name: .userAgent, value: userAgent))
        return request
    }

    /// The parts of the base URL that relative requests take, computed once.
    private struct BaseURL: Sendable {
        let scheme: String?
        let authority: String?
        let pathPrefix: String

        init(_ url: URL) {
            scheme = url.scheme?.lowercased()
            if let host = url.host, !host.isEmpty {
                var authority = host.contains(":") ? "[\(host)]" : host
                if let port = url.port { authority += ":\(port)" }
                self.authority = authority
            } else {
                authority = nil
            }
            var prefix = url.path
            if prefix.hasSuffix("/") { prefix.removeLast() }
            pathPrefix = prefix
        }

        func resolve(_ request: inout HTTPRequest) throws {
            guard let scheme, let authority else {
                throw SessionError.invalidURL("the base URL has no scheme or host")
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
