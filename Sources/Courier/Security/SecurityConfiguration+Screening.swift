import Foundation
import HTTPTypes

extension SecurityConfiguration {
    /// The checks a ``Session`` runs on every resolved request before the middleware chain:
    /// nothing has been sent when one throws.
    ///
    /// On every transport: no CR, LF or NUL in the scheme, authority, path or a header value
    /// (swift-http-types already turns them into spaces in field values; this also guards
    /// the path and authority, which it does not check).
    ///
    /// On a secured transport, additionally: Courier owns `Authorization` (and `User-Agent`,
    /// checked by the session for every request); the request passes the credential gate
    /// (``checkCredentialTarget(_:)``); and, when detection is on, no debugger is attached.
    ///
    /// - Parameter request: The resolved request, with the session's default fields merged in.
    func screen(_ request: HTTPRequest) throws {
        try Self.rejectControlCharacters(in: request)
        guard isSecured else { return }
        if request.headerFields[.authorization] != nil {
            throw CourierError.reservedHeader(
                "Authorization is owned by Courier on a secured transport: the user and device clients attach tokens; "
                    + "remove it from the request and from the default header fields"
            )
        }
        try checkCredentialTarget(request)
        if detectsDebugger { try DebuggerDetection.check() }
    }

    /// Throws unless `url` — a configured or discovered endpoint — may receive credentials:
    /// ``checkCredentialTarget(_:)`` for a request to it.
    func checkCredentialTarget(_ url: URL) throws {
        try checkCredentialTarget(
            HTTPRequest(method: .get, scheme: url.scheme, authority: Authority(url: url)?.description, path: "/")
        )
    }

    /// The credential gate: throws unless a credential — a token, a cookie, a client secret —
    /// may go with a request. The session's screen and every middleware that attaches a
    /// credential call it, for the request as it will be sent (absolute, resolved).
    ///
    /// A credential goes only through a secured configuration, over HTTPS, to an authority
    /// without user information whose host and port have a ``TrustPolicy`` — pinned, or
    /// explicitly trusting the system's roots.
    ///
    /// - Parameter request: An absolute request.
    /// - Throws: ``CourierError/Kind/untrustedHost`` on the plain (``unpinned``) configuration or for a
    ///   host without a policy, ``CourierError/Kind/insecureScheme`` for a request that is
    ///   not HTTPS, ``CourierError/Kind/invalidURL`` for a request without a host or with
    ///   user information in its authority.
    func checkCredentialTarget(_ request: HTTPRequest) throws {
        guard let authority = request.authority, let parsed = try? Authority(authority) else {
            throw CourierError.invalidURL("the request has no valid host; credentials go only to trusted hosts")
        }
        let host = parsed.host
        guard isSecured, let compiled else {
            throw CourierError(
                kind: .untrustedHost,
                message: "credentials go only through a secured transport (SecurityConfiguration.secured); "
                    + "this one is unpinned, so nothing may be attached for \(host)",
                host: host
            )
        }
        guard request.scheme?.lowercased() == "https" else {
            throw CourierError(
                kind: .insecureScheme,
                message: "a secured transport sends only HTTPS; the request to \(host) is "
                    + "\(request.scheme ?? "schemeless"), and nothing was sent",
                host: host
            )
        }
        // A path that does not start with `/` could move the host or port once a transport
        // joins it to the authority (`@evil.example/x`, `:8443/x`).
        guard let path = request.path, path.hasPrefix("/") || path == "*" else {
            throw CourierError.invalidURL(
                "the path of a request on a secured transport must start with `/`; nothing was sent"
            )
        }
        guard !parsed.hasUserInfo else {
            throw CourierError.invalidURL(
                "credentials in a URL are not allowed on a secured transport; Courier sends credentials itself"
            )
        }
        guard compiled.index(forHost: host, port: parsed.port(defaultFor: "https")) != nil else {
            throw CourierError.untrustedHost(parsed.port == nil ? host : parsed.description)
        }
    }

    /// Throws ``CourierError/Kind/invalidURL`` or ``CourierError/Kind/invalidHeader`` when the
    /// scheme, authority, path or a header value holds CR, LF or NUL: they would let a caller
    /// inject header lines or split the request.
    static func rejectControlCharacters(in request: HTTPRequest) throws {
        func isForbidden(_ byte: UInt8) -> Bool { byte == 0x0D || byte == 0x0A || byte == 0 }
        func check(_ text: String?, _ part: @autoclosure () -> String) throws {
            if let text, text.utf8.contains(where: isForbidden) {
                throw CourierError.invalidURL("the \(part()) of the request contains CR, LF or NUL")
            }
        }
        // Checked one by one: no array of parts is built on every request.
        try check(request.path, "path")
        try check(request.authority, "authority")
        try check(request.scheme, "scheme")
        for field in request.headerFields where field.value.utf8.contains(where: isForbidden) {
            throw CourierError.invalidHeader(
                "the value of header \(ErrorText.sanitized(field.name.rawName)) contains CR, LF or NUL"
            )
        }
    }
}
