extension CurlTransport {
    /// Replaces the trust set of the running transport: pins, pinned CA bundles, client
    /// certificates and pin modes.
    ///
    /// Requests that enter the transport after this returns are checked against `security`;
    /// requests already in it finish under the trust they started with, retries on a fresh
    /// connection included. A connection — or a TLS session — made under the old trust is
    /// never used for a request under the new one: each trust set gets connections of its
    /// own, and those of the old set close as libcurl retires idle connections. Nothing is
    /// dropped, and pooled connections of the new set are reused as usual.
    ///
    /// ```swift
    /// // The backup key is now the server's key: promote its pin, add the next backup.
    /// try transport.replaceTrust(with: .secured(trust: [
    ///     try TrustPolicy(host: "api.example.com", pins: [backupPin, nextBackupPin]),
    /// ]))
    /// ```
    ///
    /// A replacement changes how hosts are trusted, never which hosts: ``Session``s check a
    /// request's host against their transport's trust before it gets here, so `security` must
    /// have a policy for the same host patterns and ports, the same debugger detection, and a
    /// TLS minimum at least as high. It can never make a secured transport unsecured; each
    /// host's policy (pins or system roots, enforce or audit) is the new configuration's.
    ///
    /// - Parameter security: The new trust set, secured.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when `security` is not secured (or
    ///   this transport is not), lowers the TLS minimum, changes debugger detection or
    ///   trusts other hosts — the transport's trust is then left as it was;
    ///   ``CourierError/Kind/unsupportedTLSBackend`` when OpenSSL offers no cipher list to
    ///   keep the two sets' connections apart.
    public func replaceTrust(with security: SecurityConfiguration) throws {
        guard let trust = loop.trust else {
            throw CourierError.invalidConfiguration(
                "only a secured transport's trust can be replaced; this transport is unpinned and "
                    + "sessions on it send no credential. Make a secured transport instead"
            )
        }
        try trust.replace(with: security)
    }
}
