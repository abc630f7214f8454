import Foundation
import HTTPTypes

/// The step of a session's chain that answers `GET`s from its ``HTTPCache``, validates stored
/// responses, stores new ones, and invalidates what unsafe requests change.
///
/// It sits after the leading logging middleware and before the retry step, so a hit sends
/// nothing and a validation is retried like any request. A request that carries its own
/// conditional or range fields passes through untouched, as does every method but `GET`.
struct CacheMiddleware: Middleware {
    /// Where responses are stored.
    let cache: HTTPCache
    /// The partition a request's responses belong to, when a layer above decides it; `nil`, or
    /// a rule that returns `nil`, uses ``defaultPartition(of:)``.
    let partitionOfRequest: (@Sendable (HTTPRequest, MiddlewareContext) -> CachePartition?)?
    /// Where hits and misses are counted, if anywhere.
    let metrics: CacheMetrics?
    /// Whether requests in the shared partition are answered and stored at all: only where no
    /// step after the cache can add a credential the cache would not see — no middleware of
    /// the caller's, no cookie jar. Otherwise a response obtained with such a credential could
    /// be filed as one to a request without.
    var usesSharedPartition = true

    /// The fields that make a request conditional or partial: its response is the caller's
    /// business, so the cache neither answers nor stores it.
    static let conditionalFields: [HTTPField.Name] = [
        .ifNoneMatch, .ifModifiedSince, .ifMatch, .ifUnmodifiedSince, .ifRange, .range,
    ]

    /// The fields whose values identify a credential.
    static let credentialFields: [HTTPField.Name] = [.authorization, .proxyAuthorization, .cookie]

    /// Handles one request: see the type's description.
    ///
    /// Called with a `next` it may not keep, it validates in the caller's task: a shared
    /// validation whose first caller is cancelled is started again by the next waiter, and
    /// `stale-while-revalidate` serves stale without validating in the background. A session
    /// calls ``intercept(_:body:context:escapingNext:)`` instead.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        try await handle(request, body: body, context: context, next: next, detachable: nil)
    }

    /// Handles one request with a `next` it may keep: validations run in tasks of their own,
    /// which no caller's cancellation stops, and `stale-while-revalidate` validates in the
    /// background.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        escapingNext next: @escaping Next
    ) async throws -> Response {
        try await handle(request, body: body, context: context, next: next, detachable: next)
    }

    /// Handles one request; `detachable` is `next` when the cache may keep it.
    private func handle(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next,
        detachable: Next?
    ) async throws -> Response {
        switch request.method {
        case .get: break
        case .head, .options, .trace, .connect: return try await next(request, body, context)
        default: return try await invalidating(request, body: body, context: context, next: next)
        }
        let fields = request.headerFields
        guard !Self.conditionalFields.contains(where: { fields[$0] != nil }) else {
            return try await next(request, body, context)
        }
        let partition = partitionOfRequest?(request, context) ?? Self.defaultPartition(of: request)
        let control = Self.directives(of: fields)
        guard !control.noStore, usesSharedPartition || !partition.isShared,
            let key = CacheKey(request, partition: partition)
        else {
            return try await next(request, body, context)
        }
        let exchange = CacheExchange(cache: cache, request: request, key: key, control: control)
        let response = try await answer(exchange, body: body, context: context, next: next, detachable: detachable)
        metrics?.record(response.cacheStatus)
        return response
    }

    /// The response to a `GET` the cache may answer: stored, validated or from the network.
    private func answer(
        _ exchange: CacheExchange,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next,
        detachable: Next?
    ) async throws -> Response {
        // A validation may replace the stored response between the lookup and the join; the
        // next lookup then finds the new one.
        for _ in 0..<3 {
            guard let entry = cache.lookup(exchange.key, fields: exchange.request.headerFields) else { break }
            switch CacheRules.use(of: entry, request: exchange.control, at: Date()) {
            case .fresh:
                return entry.response(status: .hit)
            case .stale:
                return entry.response(status: .stale)
            case .staleWhileRevalidating:
                // A streamed caller's options would make the background validation's response
                // a stream, which is never stored: a buffered caller validates instead.
                if let detachable, !context.options.responseBody.isStreamed,
                    let revalidation = cache.revalidation(of: entry, key: exchange.key), revalidation.isNew
                {
                    let context = Self.detached(context)
                    Task {
                        cache.finish(entry.id, with: await exchange.validate(entry, context: context, next: detachable))
                    }
                }
                return entry.response(status: .stale)
            case .validate:
                guard !exchange.control.onlyIfCached else { return Self.gatewayTimeout() }
                guard entry.hasValidator else {
                    return try await exchange.fetch(body: body, context: context, next: next)
                }
                if context.options.responseBody.isStreamed {
                    return try await exchange.validate(entry, context: context, next: next).get()
                }
                guard let revalidation = cache.revalidation(of: entry, key: exchange.key) else { continue }
                guard revalidation.isNew else {
                    do {
                        return try await Self.outcome(of: revalidation.flight, by: context.options.deadline)
                    } catch is CancellationError where !Task.isCancelled {
                        continue  // the caller that validated inline was cancelled: validate anew
                    }
                }
                let deadline = context.options.deadline
                let context = Self.detached(context)
                guard let detachable else {
                    let result = await exchange.validate(entry, context: context, next: next)
                    cache.finish(entry.id, with: result)
                    return try result.get()
                }
                Task {
                    cache.finish(entry.id, with: await exchange.validate(entry, context: context, next: detachable))
                }
                return try await Self.outcome(of: revalidation.flight, by: deadline)
            }
        }
        guard !exchange.control.onlyIfCached else { return Self.gatewayTimeout() }
        return try await exchange.fetch(body: body, context: context, next: next)
    }

    /// Sends an unsafe request and, when it succeeds (2xx or 3xx), removes the stored
    /// responses of its URL and of a same-origin `Location` or `Content-Location`, in every
    /// partition: what one user changed, no one is served stale (RFC 9111 §4.4).
    private func invalidating(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        let response = try await next(request, body, context)
        guard (200..<400).contains(response.status.code), let scheme = request.scheme,
            let authority = request.authority
        else { return response }
        cache.invalidate(
            CacheKey(partition: .shared, method: .get, scheme: scheme, authority: authority, path: request.path)
        )
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = response.headerFields[name],
                let base = URL(string: "\(scheme)://\(authority)\(request.path ?? "/")"),
                let url = URL(string: value, relativeTo: base)?.absoluteURL,
                url.scheme?.lowercased() == scheme.lowercased(),
                let host = url.host, Self.authority(of: url, host: host).lowercased() == authority.lowercased()
            else { continue }
            let encodedPath = url.path(percentEncoded: true)
            var path = encodedPath.isEmpty ? "/" : encodedPath
            if let query = url.query(percentEncoded: true) { path += "?\(query)" }
            cache.invalidate(
                CacheKey(partition: .shared, method: .get, scheme: scheme, authority: authority, path: path)
            )
        }
        return response
    }

    /// `host[:port]` of `url`, as a request's authority spells it.
    private static func authority(of url: URL, host: String) -> String {
        let host = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return url.port.map { "\(host):\($0)" } ?? host
    }

    /// The partition of a request on a plain session: that of its credential fields'
    /// values (`Authorization`, `Proxy-Authorization`, `Cookie`), the shared one without any.
    static func defaultPartition(of request: HTTPRequest) -> CachePartition {
        partition(of: request, with: [])
    }

    /// The partition of the credential fields `request` carries together with `credentials`
    /// it carries otherwise (the cookies a jar adds, a client certificate); the shared
    /// partition when there are none.
    static func partition(of request: HTTPRequest, with credentials: [String]) -> CachePartition {
        let fields = request.headerFields
        let values = credentialFields.map { fields[values: $0] }
        guard !credentials.isEmpty || values.contains(where: { !$0.isEmpty }) else { return .shared }
        let text = values.map { $0.joined(separator: "\n") } + credentials
        return CachePartition(credential: text.joined(separator: "\u{0}"))
    }

    /// A request's directives; `Pragma: no-cache` counts as `no-cache` when it has no
    /// `Cache-Control` (RFC 9111 §5.4).
    static func directives(of fields: HTTPFields) -> CacheControl {
        var control = CacheControl(fields)
        if fields[.cacheControl] == nil, let pragma = fields[HTTPField.Name("Pragma")!],
            pragma.lowercased().contains("no-cache")
        {
            control.noCache = true
        }
        return control
    }

    /// The answer to `only-if-cached` when nothing stored may be used (RFC 9111 §5.2.1.7).
    static func gatewayTimeout() -> Response {
        Response(head: HTTPResponse(status: .gatewayTimeout))
    }

    /// The outcome of a shared validation for a caller whose own deadline is `deadline`: the
    /// validation's deadline is that of the caller that started it, so a caller with an
    /// earlier one stops waiting at its own — with ``CourierError/Kind/timedOut``, as its
    /// transfer would — and leaves the validation to the others.
    static func outcome(of flight: SharedRevalidation, by deadline: ContinuousClock.Instant?) async throws -> Response {
        guard let deadline else { return try await flight.value() }
        return try await withThrowingTaskGroup(of: Response.self) { group in
            group.addTask { try await flight.value() }
            group.addTask {
                try await Task.sleep(until: deadline)
                throw CourierError(kind: .timedOut, message: "the cached response's validation outlasted the deadline")
            }
            defer { group.cancelAll() }
            return try await group.next()!
        }
    }

    /// The longest a validation shared by several callers may take when the request that
    /// started it has no deadline: every caller waiting for it waits at most this long.
    static let longestValidation = Duration.seconds(60)

    /// `context` for a validation that outlives its caller or serves several: it reports no
    /// progress, is not suspended with one caller's task, and has a deadline (its own, or
    /// ``longestValidation`` from now).
    static func detached(_ context: MiddlewareContext) -> MiddlewareContext {
        var options = context.options
        if options.deadline == nil { options.deadline = .now + longestValidation }
        return MiddlewareContext(
            taskID: context.taskID,
            logger: context.logger,
            options: options,
            control: .none,
            retryPolicy: context.retryPolicy,
            attributes: context.attributes
        )
    }
}

extension TransferOptions.ResponseBodyMode {
    /// Whether the body is handed over as a stream.
    var isStreamed: Bool {
        if case .streamed = self { return true }
        return false
    }
}
