import HTTPTypes

extension Session.Configuration {
    /// The cache partition rule of a session that no layer above gave one, when its requests
    /// may carry a credential that their own fields do not show: the cookies the session's
    /// ``cookieJar`` adds at each hop, and the client certificate its transport presents to
    /// the host. `nil` when neither can happen, so that the cache's own rule, which looks at the
    /// request's credential fields alone, serves at no extra cost.
    ///
    /// The cache sits before the hop that adds the jar's cookies, and certificates are the
    /// transport's: without this rule, a response obtained with a session cookie or a client
    /// certificate would be filed as a response to a request without a credential.
    ///
    /// - Parameter security: The transport's trust, which names the client certificate of
    ///   each host.
    func plainCachePartition(
        security: SecurityConfiguration?
    ) -> (@Sendable (HTTPRequest, MiddlewareContext) -> CachePartition?)? {
        let jar = cookieJar
        let presentsCertificates = security?.trustPolicies.contains(where: \.presentsClientCertificate) ?? false
        guard jar != nil || presentsCertificates else { return nil }
        let certificates = presentsCertificates ? security : nil
        return { request, _ in
            var credentials: [String] = []
            if let cookies = jar?.headerValue(for: request) { credentials.append("cookie\u{0}" + cookies) }
            if let certificates, let authority = request.authority.flatMap({ try? Authority($0) }),
                let policy = certificates.trustPolicy(
                    forHost: authority.host,
                    port: authority.port ?? (request.scheme == "http" ? 80 : 443)
                )
            {
                if let certificate = policy.clientCertificate {
                    credentials.append(
                        "certificate\u{0}" + certificate.certificateFile + "\u{0}" + certificate.privateKeyFile
                    )
                } else if let provider = policy.clientCertificateProvider {
                    // One identity across renewals: the closure that gives its certificates.
                    credentials.append("certificate-provider\u{0}\(ObjectIdentifier(provider).hashValue)")
                }
            }
            guard !credentials.isEmpty else { return nil }
            return CacheMiddleware.partition(of: request, with: credentials)
        }
    }
}
