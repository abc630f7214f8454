public import HTTPTypes

extension SecurityConfiguration {
    /// Whether a credential — a token, a cookie, a client secret — may be attached to a request.
    ///
    /// Only when the configuration is secured, the request is HTTPS, its authority holds no
    /// user information, and its host has a ``TrustPolicy``. Whatever attaches credentials
    /// (the user and device clients, an auth middleware) asks this first, for the request
    /// as it will be sent: absolute, after the session resolved it.
    ///
    /// ```swift
    /// guard security.mayAttachCredentials(to: request) else { throw … }
    /// request.headerFields[.authorization] = "Bearer \(token)"
    /// ```
    ///
    /// - Parameter request: An absolute request.
    /// - Returns: Whether credentials may go to its host.
    public func mayAttachCredentials(to request: HTTPRequest) -> Bool {
        (try? checkCredentialTarget(request)) != nil
    }

    /// Throws unless a credential may be attached to a request; see
    /// ``mayAttachCredentials(to:)``.
    ///
    /// - Parameter request: An absolute request.
    /// - Throws: ``SecurityError``: ``SecurityError/Kind/untrustedHost`` for an unpinned
    ///   configuration, a relative request, user information in the authority, or a host
    ///   without a policy; ``SecurityError/Kind/insecureScheme`` for a request that is not HTTPS.
    public func checkCredentialTarget(_ request: HTTPRequest) throws {
        guard let authority = request.authority, let host = HostName.host(ofAuthority: authority) else {
            throw SecurityError(
                kind: .untrustedHost,
                message: "credentials go only to absolute requests whose host is in the trust set; this request has no host"
            )
        }
        guard isSecured, let compiled else {
            throw SecurityError(
                kind: .untrustedHost,
                message: "credentials go only through a secured session (SecurityConfiguration.secured); "
                    + "this one is unpinned, so nothing may be attached for \(host)",
                host: host
            )
        }
        guard request.scheme?.lowercased() == "https" else {
            throw SecurityError(
                kind: .insecureScheme,
                message: "credentials go only over HTTPS; the request to \(host) is \(request.scheme ?? "schemeless")",
                host: host
            )
        }
        guard !authority.contains("@") else {
            throw SecurityError(
                kind: .untrustedHost,
                message: "the authority of the request to \(host) holds user information; Courier sends credentials itself",
                host: host
            )
        }
        guard compiled.index(forHost: host) != nil else { throw SecurityError.untrustedHost(host) }
    }
}
