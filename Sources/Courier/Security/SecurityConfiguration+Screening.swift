import HTTPTypes

extension SecurityConfiguration {
    /// The checks ``Session`` runs on every resolved request before the middleware chain:
    /// nothing has been sent when one throws.
    ///
    /// On every session: no CR, LF or NUL in the scheme, authority, path or a header value
    /// (swift-http-types already turns them into spaces in field values; this also guards
    /// the path and authority, which it does not check).
    ///
    /// On a secured session, additionally: Courier owns `Authorization` (and `User-Agent`,
    /// checked by the session for every request); the request is HTTPS to a host with a
    /// policy and without user information; the transport enforces this configuration;
    /// and, when detection is on, no debugger is attached.
    ///
    /// - Parameters:
    ///   - request: The resolved request, with the session's default fields merged in.
    ///   - transport: The session's transport.
    func screen(_ request: HTTPRequest, transport: any Transport) throws {
        try Self.rejectControlCharacters(in: request)
        guard isSecured, let compiled else { return }
        if request.headerFields[.authorization] != nil {
            throw SessionError.invalidHeader(
                "Authorization is owned by Courier on a secured session: the user and device clients attach tokens; "
                    + "remove it from the request and from the default header fields"
            )
        }
        guard let authority = request.authority, let host = HostName.host(ofAuthority: authority) else {
            throw SessionError.invalidURL("the request has no host")
        }
        guard request.scheme?.lowercased() == "https" else {
            throw SecurityError(
                kind: .insecureScheme,
                message: "a secured session sends only HTTPS; the request to \(host) is \(request.scheme ?? "schemeless"), "
                    + "and nothing was sent",
                host: host
            )
        }
        guard !authority.contains("@") else {
            throw SessionError.invalidURL(
                "credentials in a URL are not allowed on a secured session; Courier sends credentials itself"
            )
        }
        guard compiled.index(forHost: host) != nil else { throw SecurityError.untrustedHost(host) }
        guard let enforcing = transport as? any TrustEnforcingTransport, enforcing.enforces(self) else {
            throw SecurityError(
                kind: .trustNotEnforced,
                message: "the session is secured, but its transport (\(type(of: transport))) does not enforce the session's "
                    + "trust policies; let the session create its transport, or give a CurlTransport whose "
                    + "configuration has `security` set to the session's; nothing was sent",
                host: host
            )
        }
        if detectsDebugger { try DebuggerDetection.check() }
    }

    /// Throws ``SessionError`` when the scheme, authority, path or a header value holds CR,
    /// LF or NUL: they would let a caller inject header lines or split the request.
    static func rejectControlCharacters(in request: HTTPRequest) throws {
        func isForbidden(_ byte: UInt8) -> Bool { byte == 0x0D || byte == 0x0A || byte == 0 }
        func check(_ text: String?, _ part: @autoclosure () -> String) throws {
            if let text, text.utf8.contains(where: isForbidden) {
                throw SessionError.invalidURL("the \(part()) of the request contains CR, LF or NUL")
            }
        }
        // Checked one by one: no array of parts is built on every request.
        try check(request.path, "path")
        try check(request.authority, "authority")
        try check(request.scheme, "scheme")
        for field in request.headerFields where field.value.utf8.contains(where: isForbidden) {
            throw SessionError.invalidHeader("the value of header \(field.name) contains CR, LF or NUL")
        }
    }
}
