/// How Courier trusts the TLS servers of one host, or of the hosts one label below a domain.
///
/// A policy pins at least one of:
///
/// - **SPKI pins**: the server's verified chain must contain a certificate — leaf,
///   intermediate or root — whose public key matches one of ``pins``. Pin several keys,
///   so that a backup key can take over without an app update.
/// - **A pinned CA bundle**: only the roots in ``pinnedCertificateAuthorities`` are trusted
///   for these hosts, instead of the system's store (pinning to a provider's root set).
///
/// With pins alone, the chain is verified against the system's CA store (or the
/// transport's ``CurlTransport/Configuration/trustedCertificateBundlePath``) and must then
/// match a pin. With both, the chain must verify against the pinned bundle and match a pin.
/// Host name verification is always on; no policy can turn it off.
///
/// ```swift
/// let gateway = try TrustPolicy(
///     host: "api.example.com",
///     pins: [try SPKIPin("sha256//current-key…="), try SPKIPin("sha256//backup-key…=")]
/// )
/// let cdn = try TrustPolicy(host: "*.cdn.example.com", pinnedCertificateAuthorities: "/etc/myapp/roots.pem")
/// ```
///
/// Give a ``clientCertificate`` to authenticate with mutual TLS to these hosts; it is
/// presented to these hosts only, never to another host a redirect leads to.
public struct TrustPolicy: Sendable, Hashable {
    /// The host pattern in normal form: `api.example.com`, `127.0.0.1`, or `*.example.com`
    /// (one label below `example.com`).
    public let host: String
    /// The SPKI SHA-256 pins; one certificate of the verified chain must match one of them.
    public let pins: [SPKIPin]
    /// A PEM bundle of the only roots trusted for these hosts, or `nil` for the system's.
    public let pinnedCertificateAuthorities: String?
    /// The certificate presented to these hosts for mutual TLS.
    public let clientCertificate: ClientCertificate?

    let pattern: HostPattern

    /// Creates a trust policy.
    ///
    /// - Parameters:
    ///   - host: A host name, an IP address, or `*.` followed by a domain of at least two
    ///     labels. No scheme, port or path.
    ///   - pins: The SPKI pins; several to allow a backup key.
    ///   - pinnedCertificateAuthorities: The path of a PEM bundle of the only trusted roots.
    ///   - clientCertificate: The client certificate for mutual TLS.
    /// - Throws: ``SecurityError/Kind/invalidConfiguration`` for a malformed host pattern,
    ///   or when there is neither a pin nor a pinned CA bundle: a trusted host is always pinned.
    public init(
        host: String,
        pins: [SPKIPin] = [],
        pinnedCertificateAuthorities: String? = nil,
        clientCertificate: ClientCertificate? = nil
    ) throws {
        let pattern = try HostPattern(host)
        guard !pins.isEmpty || pinnedCertificateAuthorities != nil else {
            throw SecurityError.invalidConfiguration(
                "the trust policy for \(pattern.text) has neither a pin nor a pinned CA bundle; "
                    + "a trusted host is always pinned (see the article Pinning and trust)",
                host: pattern.text
            )
        }
        var unique: [SPKIPin] = []
        for pin in pins where !unique.contains(pin) { unique.append(pin) }
        self.pattern = pattern
        self.host = pattern.text
        self.pins = unique
        self.pinnedCertificateAuthorities = pinnedCertificateAuthorities
        self.clientCertificate = clientCertificate
    }

    /// Whether the policy applies to a host.
    ///
    /// - Parameter host: A host name or IP address, in any case, with or without a
    ///   trailing dot; an IPv6 address with or without brackets.
    /// - Returns: Whether ``host`` names it or its wildcard covers it.
    public func matches(host: String) -> Bool {
        pattern.matches(HostName.normalized(host))
    }
}
