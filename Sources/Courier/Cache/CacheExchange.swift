import Foundation
import HTTPTypes

/// One `GET` the cache handles: the request, its key and directives, and the two ways it goes
/// to the network — for a new response, or to validate a stored one.
struct CacheExchange: Sendable {
    /// Where responses are stored.
    let cache: HTTPCache
    /// The request, as the caller sent it.
    let request: HTTPRequest
    /// Where its responses are stored.
    let key: CacheKey
    /// Its `Cache-Control` directives.
    let control: CacheControl

    /// Sends the request and stores the response when it may be stored: only a buffered
    /// response, that was not redirected, and not larger than the cache's entry limit.
    func fetch(body: RequestBody?, context: MiddlewareContext, next: Middleware.Next) async throws -> Response {
        let requestTime = Date()
        let response = try await next(request, body, context)
        store(response, requestTime: requestTime)
        return response
    }

    /// Validates `entry` with a conditional request (RFC 9111 §4.3): a 304 updates its header
    /// fields and answers with its body (``Response/CacheStatus/revalidated``); a new response
    /// replaces it; a failure, or a 500, 502, 503 or 504, answers with it stale when
    /// `stale-if-error` allows (``Response/CacheStatus/stale``).
    func validate(
        _ entry: CachedResponse,
        context: MiddlewareContext,
        next: Middleware.Next
    ) async -> Result<Response, any Error> {
        var conditional = request
        if let tag = entry.entityTag { conditional.headerFields[.ifNoneMatch] = tag }
        if let modified = entry.lastModified { conditional.headerFields[.ifModifiedSince] = modified }
        let requestTime = Date()
        let response: Response
        do {
            response = try await next(conditional, nil, context)
        } catch {
            if !(error is CancellationError), CacheRules.mayServeOnError(entry, request: control, at: Date()) {
                return .success(entry.response(status: .stale))
            }
            return .failure(error)
        }
        if response.status.code == 304 {
            return await notModified(response, entry: entry, requestTime: requestTime, context: context, next: next)
        }
        if CacheRules.serverErrors.contains(response.status.code),
            CacheRules.mayServeOnError(entry, request: control, at: Date())
        {
            response.body.cancel()
            return .success(entry.response(status: .stale))
        }
        if response.status.code < 500 { cache.remove(id: entry.id, key: key) }
        store(response, requestTime: requestTime)
        return .success(response)
    }

    /// The answer to a validation the server answered with `response`, a 304: `entry` with
    /// its fields updated, stored again. A 304 whose entity tag is not `entry`'s does not
    /// describe it: the request then goes again without conditions.
    private func notModified(
        _ response: Response,
        entry: CachedResponse,
        requestTime: Date,
        context: MiddlewareContext,
        next: Middleware.Next
    ) async -> Result<Response, any Error> {
        if let tag = response.headerFields[.eTag], let stored = entry.entityTag,
            Self.weakTag(tag) != Self.weakTag(stored)
        {
            cache.remove(id: entry.id, key: key)
            do {
                return .success(try await fetch(body: nil, context: context, next: next))
            } catch {
                return .failure(error)
            }
        }
        var head = entry.head
        head.headerFields = CacheRules.updated(entry.head.headerFields, with: response.headerFields)
        // The updated response is stored again only when it still may be (the 304 may have
        // made it private, no-store or cookie-setting) and the stored one is still there: an
        // unsafe request may have invalidated it meanwhile, and a late 304 must not bring it back.
        if CacheRules.mayStore(head, for: request, in: key.partition), cache.contains(id: entry.id, key: key) {
            cache.store(
                head,
                body: entry.body,
                trailerFields: entry.trailerFields,
                for: request,
                key: key,
                requestTime: requestTime,
                responseTime: Date()
            )
        } else {
            cache.remove(id: entry.id, key: key)
        }
        let body =
            entry.trailerFields.isEmpty
            ? Response.Body(entry.body) : Response.Body(entry.body, trailerFields: entry.trailerFields)
        var answer = Response(head: head, body: body, metrics: response.metrics)
        answer.cacheStatus = .revalidated
        return .success(answer)
    }

    /// An entity tag without its weakness mark, for the weak comparison (RFC 9110 §8.8.3.2).
    private static func weakTag(_ tag: String) -> Substring {
        let tag = tag.trimmingCharacters(in: .whitespaces)[...]
        return tag.hasPrefix("W/") ? tag.dropFirst(2) : tag
    }

    /// Stores `response` to the request sent at `requestTime`, when it may be stored.
    private func store(_ response: Response, requestTime: Date) {
        guard let data = response.body.bufferedData, (response.metrics?.redirectCount ?? 0) == 0,
            CacheRules.mayStore(response.head, for: request, in: key.partition)
        else { return }
        cache.store(
            response.head,
            body: data,
            trailerFields: response.trailerFields,
            for: request,
            key: key,
            requestTime: requestTime,
            responseTime: Date()
        )
    }
}
