extension CurlTransport: TrustEnforcingTransport {
    /// Whether this transport was configured with `security` (see
    /// ``CurlTransport/Configuration/security``): then every TLS connection it makes is
    /// checked against the policy of the host it goes to, and plain HTTP is refused.
    ///
    /// - Parameter security: The session's security configuration.
    /// - Returns: `true` when the transport's configuration is the same secured
    ///   configuration, or when `security` is unpinned.
    public func enforces(_ security: SecurityConfiguration) -> Bool {
        guard security.isSecured else { return true }
        return configuration.security == security
    }
}
