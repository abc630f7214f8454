import Foundation
import HTTPTypes

/// What a session with cookies does around each transfer: adds the jar's `Cookie` field to
/// the request as it is sent, and stores the `Set-Cookie` fields of its response.
///
/// It wraps the transport call itself, under the redirect logic, so that each hop gets the
/// cookies of its own URL and a redirect's cookies are stored before the next hop goes. The
/// request the redirect logic computes the next hop from never carries the jar's cookies, so
/// a hop to another origin cannot take them along. A session without a jar has no such step:
/// its innermost step is the plain transfer.
struct SessionCookies: Sendable {
    /// The session's jar (``Session/Configuration/cookieJar``).
    let jar: CookieJar?
    /// The jar of one request, when a layer above chooses it; its answer wins over ``jar``.
    let jarOfRequest: (@Sendable (MiddlewareContext) -> CookieJar?)?
    /// The transport's trust: on a secured transport cookies go only where credentials may.
    let security: SecurityConfiguration

    /// The cookie step of `configuration`, or `nil` when it keeps no cookies.
    init?(_ configuration: Session.Configuration, security: SecurityConfiguration) {
        guard configuration.cookieJar != nil || configuration.cookieJarOfRequest != nil else { return nil }
        jar = configuration.cookieJar
        jarOfRequest = configuration.cookieJarOfRequest
        self.security = security
    }

    /// The jar of the request `context` belongs to, if any.
    func jar(for context: MiddlewareContext) -> CookieJar? {
        if let jarOfRequest { return jarOfRequest(context) }
        return jar
    }

    /// `request` as it is sent: with the jar's cookies for its URL after any `Cookie` field of
    /// its own — unless the transport is secured and the host is not one credentials may go to.
    @inline(never)
    func attaching(to request: HTTPRequest, from jar: CookieJar) -> HTTPRequest {
        if security.isSecured, (try? security.checkCredentialTarget(request)) == nil { return request }
        guard let value = jar.headerValue(for: request) else { return request }
        var request = request
        // One field, as RFC 6265bis asks of HTTP/1.1: the `Cookie` subscript would split it.
        let own = request.headerFields[.cookie]
        if own != nil { request.headerFields.removeAll { $0.name == .cookie } }
        let combined = own.map { $0.isEmpty ? value : $0 + "; " + value } ?? value
        request.headerFields.append(HTTPField(name: .cookie, value: combined))
        return request
    }

    /// Sends `request` over `transport` with the jar's cookies, and stores the response's.
    @inline(__always)
    func transfer<T: Transport>(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        over transport: T
    ) async throws -> Response {
        guard let jar = jar(for: context) else {
            return try await transport.execute(request, body: body, context: context)
        }
        let response = try await transport.execute(attaching(to: request, from: jar), body: body, context: context)
        jar.store(from: response.head, for: request)
        return response
    }

    /// Sends `request` through `send` with the jar's cookies, and stores the response's.
    func exchange(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        send: Middleware.Next
    ) async throws -> Response {
        guard let jar = jar(for: context) else { return try await send(request, body, context) }
        let response = try await send(attaching(to: request, from: jar), body, context)
        jar.store(from: response.head, for: request)
        return response
    }
}
