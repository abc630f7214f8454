internal import CCurlShim
import HTTPTypes

extension CurlTransfer {
    /// Applies the TLS policy to a transfer (loop thread).
    ///
    /// Called for every transfer; it does nothing for plain HTTP on a transport without a
    /// secured ``CurlTransport/Configuration/security``. Peer and host name verification
    /// stay on: libcurl verifies both by default, a secured transport sets them explicitly,
    /// and nothing here or in the public API turns them off.
    ///
    /// On a secured transport, every transfer — plain HTTP ones too, so that an
    /// HTTP-to-HTTPS redirect cannot open an unchecked TLS connection that a later request
    /// would reuse — gets the `CURLOPT_SSL_CTX_FUNCTION` hook (``CurlTLSHook``). libcurl
    /// calls it for each new TLS connection, with the connection's host in
    /// `CURLINFO_EFFECTIVE_URL`, and the hook applies that host's policy. Only HTTPS may
    /// be used, for the request and for redirects.
    ///
    /// The policies are those of the transfer's ``TrustGeneration``, and so is the cipher
    /// list: a tag that keeps its connections and TLS sessions apart from those of every
    /// other generation, since libcurl compares cipher lists before it reuses either.
    func configureTLS(_ easy: UnsafeMutableRawPointer, transport: CurlTransport.Configuration) throws {
        let generation = trustGeneration ?? loop.trust?.current
        let security = generation?.security ?? transport.security
        guard security.isSecured || isHTTPS || transport.proxy != .none else { return }
        let version = security.minimumTLSVersion == .v1_3 ? CURL_SSLVERSION_TLSv1_3 : CURL_SSLVERSION_TLSv1_2
        try set(easy, CURLOPT_SSLVERSION, Int(version))
        if let bundle = transport.trustedCertificateBundlePath {
            try set(easy, CURLOPT_CAINFO, bundle)
            try set(easy, CURLOPT_CAPATH, nil)
        }
        guard security.isSecured, let generation else { return }
        try TLSBackend.check()
        try set(easy, CURLOPT_SSL_VERIFYPEER, 1)
        try set(easy, CURLOPT_SSL_VERIFYHOST, 2)
        try set(easy, CURLOPT_PROTOCOLS_STR, "https")
        try set(easy, CURLOPT_REDIR_PROTOCOLS_STR, "https")
        // Set on every transfer: easy handles are reused, and an older generation's transfer
        // may start on a handle a newer one used.
        try set(easy, CURLOPT_SSL_CIPHER_LIST, generation.cipherList)
        try check(ccurl_easy_setopt_ssl_ctx_function(easy, CurlTLSHook.sslContext), "the TLS trust hook")
        // Unretained: the transfer holds its generation while libcurl makes its connections,
        // and each connection then holds it itself (`CurlTLSHook.sslContext`).
        try set(easy, CURLOPT_SSL_CTX_DATA, pointer: Unmanaged.passUnretained(generation).toOpaque())
    }

    /// The ``CourierError`` for a transfer that the TLS hook refused, or `nil` for any
    /// other failure (loop thread, before the easy handle is reset).
    ///
    /// The hook refuses a chain with `X509_V_ERR_APPLICATION_VERIFICATION`, which libcurl
    /// reports as `CURLE_PEER_FAILED_VERIFICATION` with that verify result. The host is the
    /// one of the connection that failed (after a redirect, the redirect's).
    func securityFailure(_ code: CURLcode) -> CourierError? {
        guard code == CURLE_PEER_FAILED_VERIFICATION, let easy,
            let compiled = (trustGeneration ?? loop.trust?.current)?.compiled
        else {
            return nil
        }
        var result = 0
        guard ccurl_easy_getinfo_long(easy, CURLINFO_SSL_VERIFYRESULT, &result) == CURLE_OK,
            result == ccourier_tls_application_verification_error()
        else { return nil }
        var url: UnsafePointer<CChar>?
        _ = ccurl_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &url)
        let connection = url.flatMap { Authority.of(url: String(cString: $0)) }
        let host = connection?.authority.host ?? request.authority ?? "the server"
        let port = connection.flatMap { $0.authority.port(defaultFor: $0.scheme) }
        guard let policy = compiled.policy(forHost: host, port: port) else {
            return CourierError.untrustedHost(connection?.authority.description ?? host)
        }
        return CourierError.pinMismatch(
            host: host,
            expected: policy.pins,
            pinnedCertificateAuthorities: policy.pinnedCertificateAuthorities
        )
    }
}

/// The `CURLOPT_SSL_CTX_FUNCTION` callback of secured transfers.
///
/// A static member of a nonisolated type, so that Swift does not infer an actor for it:
/// libcurl calls it on the loop thread, while it sets up a new TLS connection.
enum CurlTLSHook {
    /// Applies the policy of the connection's host to the `SSL_CTX`: pinned roots, client
    /// certificate, and the verify hook that matches pins against the verified chain and
    /// reports a chain that matches none (``pinMismatch``). A host without a policy gets a
    /// hook that refuses every chain. The user data is the transfer's ``TrustGeneration``,
    /// which the transfer holds while libcurl calls this.
    static let sslContext: ccurl_ssl_ctx_callback = { easy, sslContext, userData in
        guard let easy, let sslContext, let userData else { return CURLE_SSL_CERTPROBLEM }
        let generation = Unmanaged<TrustGeneration>.fromOpaque(userData).takeUnretainedValue()
        var url: UnsafePointer<CChar>?
        guard ccurl_easy_getinfo_string(easy, CURLINFO_EFFECTIVE_URL, &url) == CURLE_OK, let url,
            let connection = Authority.of(url: String(cString: url))
        else {
            return ccourier_tls_apply(sslContext, nil) == 1 ? CURLE_OK : CURLE_SSL_CERTPROBLEM
        }
        let port = connection.authority.port(defaultFor: connection.scheme)
        guard let index = generation.compiled.index(forHost: connection.authority.host, port: port) else {
            return ccourier_tls_apply(sslContext, nil) == 1 ? CURLE_OK : CURLE_SSL_CERTPROBLEM
        }
        // The connection keeps its generation (and so the compiled policy OpenSSL points
        // into) alive for as long as it is open: released when libcurl frees its SSL_CTX.
        let applied = ccourier_tls_apply_to_connection(
            sslContext,
            generation.compiled.handle(at: index),
            connection.authority.host,
            port ?? -1,
            index,
            pinMismatch,
            Unmanaged.passRetained(generation).toOpaque(),
            releaseGeneration
        )
        return applied == 1 ? CURLE_OK : CURLE_SSL_CERTPROBLEM
    }

    /// Drops a connection's reference to its ``TrustGeneration``, when libcurl frees the
    /// connection's `SSL_CTX`.
    static let releaseGeneration: @convention(c) (UnsafeMutableRawPointer?) -> Void = { context in
        guard let context else { return }
        Unmanaged<TrustGeneration>.fromOpaque(context).release()
    }

    /// Called in a handshake whose verified chain matched none of the policy's pins; the
    /// context is the transfer's ``TrustGeneration``.
    static let pinMismatch: ccourier_pin_mismatch_callback = { context, host, port, index, digests, count, _ in
        guard let context else { return }
        let generation = Unmanaged<TrustGeneration>.fromOpaque(context).takeUnretainedValue()
        generation.reportMismatch(
            host: String(cString: host),
            port: port,
            policyIndex: index,
            chain: UnsafeBufferPointer(start: digests, count: count * 32)
        )
    }
}
