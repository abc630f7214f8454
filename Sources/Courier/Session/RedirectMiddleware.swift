import Foundation
import HTTPTypes

/// Follows redirects for every transport, in Swift, with one set of rules.
///
/// The session puts it innermost, right before the transport, so each hop is one transfer
/// and everything outside — logging, retries, credentials — sees one request and its final
/// response. Transports never follow redirects themselves.
///
/// - **Method and body** (RFC 9110 §15.4): 303 turns any method but HEAD into a GET without
///   body; 301 and 302 turn a POST into a GET without body; 307 and 308 keep the method and
///   send the body again — only a replayable one: a 307 or 308 for a body that can be sent
///   once is handed to the caller instead. A dropped body takes its `Content-*` fields with it.
/// - **Credentials** are stripped when a hop leaves the origin (scheme, host or port):
///   `Authorization`, `Proxy-Authorization`, `Cookie`, and any field whose name marks a
///   secret (`X-API-Key`, `X-Auth-Token`, …). The origin is compared in the normal form
///   trust policies use.
/// - **A DPoP proof** is made for one method and URL, so no hop carries it: a request with a
///   `DPoP` field goes on without it and without `Authorization`, also to the same origin —
///   the hop is sent without credentials rather than with a proof for another URL.
/// - **Never HTTPS to HTTP**: ``CourierError/Kind/insecureRedirect``.
/// - **On a secured transport** a hop must go to a trusted host over HTTPS, checked before
///   anything is sent, and a body is never sent again to another origin
///   (``CourierError/Kind/crossOriginRedirect``).
/// - **A maximum count** (``TransferOptions/maximumRedirects``; `0` hands every redirect to
///   the caller); past it, ``CourierError/Kind/tooManyRedirects``.
/// - A `Location` that is not an HTTP(S) URL ends the chain: the caller gets that response.
///
/// The URLs the chain went through are on the final response's
/// ``Response/Metrics/redirectChain``.
struct RedirectMiddleware: Middleware {
    /// The transport's trust, which every hop is checked against.
    let security: SecurityConfiguration
    /// The caller's hook, asked before each hop (``Session/Configuration/shouldFollowRedirect``).
    let approval: (@Sendable (HTTPResponse, HTTPRequest) throws -> Bool)?

    /// Whether `response` is a redirect this layer may follow (the statuses with a
    /// `Location` meaning, while redirects are followed at all).
    static func isRedirect(_ response: Response, options: TransferOptions) -> Bool {
        switch response.statusCode {
        case 301, 302, 303, 307, 308: options.maximumRedirects > 0
        default: false
        }
    }

    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        let response = try await next(request, body, context)
        guard Self.isRedirect(response, options: context.options) else { return response }
        return try await follow(response, of: request, body: body, context: context, send: next)
    }

    /// Follows the redirect `response` answered `request` with, and every one after it.
    ///
    /// Never inlined: its state would otherwise enlarge the async frame of the innermost step,
    /// which every request in flight holds while it waits for its transfer.
    @inline(never)
    func follow(
        _ response: Response,
        of request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        send: Middleware.Next
    ) async throws -> Response {
        var response = response
        var request = request
        var body = body
        var chain: [URL] = []
        while let hop = try nextHop(after: response, of: request, body: body, followed: chain.count, context: context) {
            chain.append(hop.url)
            request = hop.request
            body = hop.body
            response.body = Response.Body()  // a streamed redirect body goes now, ending its transfer
            response = try await send(request, body, context)
        }
        if !chain.isEmpty {
            var metrics = response.metrics ?? Response.Metrics()
            metrics.redirectChain = chain
            metrics.redirectCount = chain.count
            response.metrics = metrics
        }
        return response
    }

    /// One hop to follow.
    struct Hop {
        var request: HTTPRequest
        var body: RequestBody?
        var url: URL
    }

    /// The request a redirect response leads to, or `nil` when the response goes to the caller.
    func nextHop(
        after response: Response,
        of request: HTTPRequest,
        body: RequestBody?,
        followed: Int,
        context: MiddlewareContext
    ) throws -> Hop? {
        let status = response.statusCode
        guard Self.isRedirect(response, options: context.options), let location = response.headerFields[.location],
            let scheme = request.scheme, let authority = request.authority,
            let current = URL(string: "\(scheme)://\(authority)\(request.path ?? "/")"),
            let target = URL(string: location, relativeTo: current)?.absoluteURL,
            let parts = try? RequestTarget.absoluteParts(of: target.absoluteString),
            let from = Authority.Origin(url: current),
            let to = Authority.Origin(url: target)
        else { return nil }
        let limit = context.options.maximumRedirects
        guard followed < limit else {
            throw CourierError(
                kind: .tooManyRedirects,
                message: "more than \(limit) redirects; the last one led to \(to)"
            )
        }
        if from.scheme == "https", to.scheme != "https" {
            throw CourierError(
                kind: .insecureRedirect,
                message: "a redirect from HTTPS to \(to) was refused: it would send the request unencrypted",
                host: to.host
            )
        }

        var next = request
        if next.headerFields[.dpop] != nil {
            next.headerFields[.dpop] = nil
            next.headerFields[.authorization] = nil
        }
        next.scheme = parts.scheme
        next.authority = parts.authority
        next.path = String(parts.pathAndQuery.prefix { $0 != "#" })  // a fragment is never sent
        var nextBody = body
        let becomesGET =
            status == 303 ? request.method != .head : (status == 301 || status == 302) && request.method == .post
        if becomesGET || status == 303 {
            if becomesGET { next.method = .get }
            nextBody = nil
            next.headerFields.removeAll { $0.name.canonicalName.hasPrefix("content-") }
        } else if let body, !body.isReplayable {
            return nil  // a 307 or 308 for a body that cannot be sent again: the caller decides
        }
        if from != to {
            next.headerFields.removeAll { Redaction.isSensitive($0.name) }
            if security.isSecured, nextBody != nil {
                throw CourierError.crossOriginRedirect(status: status, toHost: to.host)
            }
        }
        if security.isSecured {
            try SecurityConfiguration.rejectControlCharacters(in: next)
            try security.checkCredentialTarget(next)
        }
        if let approval, try !approval(response.head, next) { return nil }
        return Hop(request: next, body: nextBody, url: target)
    }
}

extension Response {
    /// Whether every request of the redirect chain went to the origin `request` went to:
    /// `false` when a hop left it, since from that hop on the credentials stayed behind —
    /// also when a later hop came back (A → B → A).
    func isFromOrigin(of request: HTTPRequest) -> Bool {
        guard let chain = metrics?.redirectChain, !chain.isEmpty else { return true }
        guard let scheme = request.scheme, let authority = request.authority.flatMap({ try? Authority($0) }) else {
            return false
        }
        let origin = Authority.Origin(scheme: scheme, authority: authority)
        return chain.allSatisfy { Authority.Origin(url: $0) == origin }
    }
}
