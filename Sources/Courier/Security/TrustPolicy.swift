/// How Courier trusts the TLS servers of one host, or of the hosts one label below a domain.
///
/// A policy made with ``init(host:port:pins:pinnedCertificateAuthorities:clientCertificate:)``
/// pins at least one of:
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
/// Pinning is the default. To trust a host through the system's CA store alone — an
/// ordinary public API whose keys you do not control — say so with
/// ``systemRoots(host:port:clientCertificate:)``, and read what that gives up.
///
/// A policy without a ``port`` covers every port of its host; one that names a port covers
/// that port only, and wins over a portless policy of the same host. Give each listener its
/// own policy when their keys differ, so that a backup pin meant for one is not trusted on
/// the others:
///
/// ```swift
/// let admin = try TrustPolicy(host: "api.example.com", port: 8443, pins: [adminPin, adminBackupPin])
/// ```
///
/// Give a ``clientCertificate`` to authenticate with mutual TLS to these hosts; it is
/// presented to these hosts only, never to another host a redirect leads to. A certificate
/// that is renewed while the process runs comes from a closure instead
/// (``init(host:port:pins:pinnedCertificateAuthorities:pinMode:renewalMargin:clientCertificate:)``).
///
/// A new pin is rolled out in ``PinMode/audit`` mode first: a chain that matches none of the
/// pins is reported, not refused (see the article Rotating trust).
public struct TrustPolicy: Sendable, Hashable {
    /// The host pattern in normal form: `api.example.com`, `127.0.0.1`, or `*.example.com`
    /// (one label below `example.com`).
    public let host: String
    /// The port the policy is for, or `nil` for every port of ``host``.
    public let port: Int?
    /// The SPKI SHA-256 pins; one certificate of the verified chain must match one of them.
    /// Empty for a policy that pins only a CA bundle, or nothing (``isPinned``).
    public let pins: [SPKIPin]
    /// A PEM bundle of the only roots trusted for these hosts, or `nil` for the system's.
    public let pinnedCertificateAuthorities: String?
    /// The certificate presented to these hosts for mutual TLS; `nil` when there is none, or
    /// when it comes from a closure (``providesClientCertificate``).
    public let clientCertificate: ClientCertificate?
    /// What a verified chain that matches none of the ``pins`` does: refused
    /// (``PinMode/enforce``, the default) or reported and accepted (``PinMode/audit``).
    public let pinMode: PinMode

    let pattern: HostPattern
    /// Where the client certificate comes from when a closure gives it.
    let clientCertificateProvider: ClientCertificateProvider?

    /// Whether the policy presents a client certificate from a closure, asked again before
    /// the certificate expires.
    public var providesClientCertificate: Bool { clientCertificateProvider != nil }

    /// Whether the policy presents a client certificate, given or from a closure.
    var presentsClientCertificate: Bool { clientCertificate != nil || clientCertificateProvider != nil }

    /// Whether the policy pins the host's keys or roots: `false` only for a policy made with
    /// ``systemRoots(host:port:clientCertificate:)``, which trusts the system's CA store.
    public var isPinned: Bool { !pins.isEmpty || pinnedCertificateAuthorities != nil }

    /// Creates a trust policy that pins its hosts.
    ///
    /// - Parameters:
    ///   - host: A host name, an IP address, or `*.` followed by a domain of at least two
    ///     labels. No scheme, port or path.
    ///   - port: The one port the policy covers (1–65535), or `nil` for every port.
    ///   - pins: The SPKI pins; several to allow a backup key.
    ///   - pinnedCertificateAuthorities: The path of a PEM bundle of the only trusted roots.
    ///   - clientCertificate: The client certificate for mutual TLS.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` for a malformed host pattern,
    ///   or a port outside 1–65535, or when there is neither a pin nor a pinned CA bundle:
    ///   this initializer always pins (``systemRoots(host:port:clientCertificate:)`` is the
    ///   explicit way not to).
    public init(
        host: String,
        port: Int? = nil,
        pins: [SPKIPin] = [],
        pinnedCertificateAuthorities: String? = nil,
        clientCertificate: ClientCertificate? = nil
    ) throws {
        try self.init(
            host: host,
            port: port,
            pins: pins,
            pinnedCertificateAuthorities: pinnedCertificateAuthorities,
            clientCertificate: clientCertificate,
            pinMode: .enforce
        )
    }

    /// Creates a trust policy that pins its hosts, in the given pin mode.
    ///
    /// ```swift
    /// // Roll out a new key: report chains that do not match it, refuse nothing yet.
    /// let trial = try TrustPolicy(host: "api.example.com", pins: [nextPin], pinMode: .audit)
    /// ```
    ///
    /// - Parameters:
    ///   - host: A host name, an IP address, or `*.` followed by a domain of at least two
    ///     labels. No scheme, port or path.
    ///   - port: The one port the policy covers (1–65535), or `nil` for every port.
    ///   - pins: The SPKI pins; several to allow a backup key.
    ///   - pinnedCertificateAuthorities: The path of a PEM bundle of the only trusted roots.
    ///   - clientCertificate: The client certificate for mutual TLS.
    ///   - pinMode: Whether a chain that matches no pin is refused or only reported.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` as for
    ///   ``init(host:port:pins:pinnedCertificateAuthorities:clientCertificate:)``.
    public init(
        host: String,
        port: Int? = nil,
        pins: [SPKIPin] = [],
        pinnedCertificateAuthorities: String? = nil,
        clientCertificate: ClientCertificate? = nil,
        pinMode: PinMode
    ) throws {
        try self.init(
            pinning: host,
            port: port,
            pins: pins,
            pinnedCertificateAuthorities: pinnedCertificateAuthorities,
            clientCertificate: clientCertificate,
            provider: nil,
            pinMode: pinMode
        )
    }

    /// The pinned policy every public initializer that pins makes.
    init(
        pinning host: String,
        port: Int?,
        pins: [SPKIPin],
        pinnedCertificateAuthorities: String?,
        clientCertificate: ClientCertificate?,
        provider: ClientCertificateProvider?,
        pinMode: PinMode
    ) throws {
        let pattern = try Self.pattern(host, port: port)
        guard !pins.isEmpty || pinnedCertificateAuthorities != nil else {
            throw CourierError.invalidConfiguration(
                "the trust policy for \(pattern.text) has neither a pin nor a pinned CA bundle; "
                    + "to trust the system's CA store for it without pins, use TrustPolicy.systemRoots(host:) "
                    + "(see the article Pinning and trust)",
                host: pattern.text
            )
        }
        var unique: [SPKIPin] = []
        for pin in pins where !unique.contains(pin) { unique.append(pin) }
        self.init(
            pattern: pattern,
            port: port,
            pins: unique,
            pinnedCertificateAuthorities: pinnedCertificateAuthorities,
            clientCertificate: clientCertificate,
            provider: provider,
            pinMode: pinMode
        )
    }

    /// A policy that trusts a host through the system's CA store, without pins.
    ///
    /// The host joins the trust set, so credentials may go to it. Every connection to it is
    /// still HTTPS, at least ``SecurityConfiguration/minimumTLSVersion``, with a chain that
    /// verifies against the system's CA store (or the transport's
    /// ``CurlTransport/Configuration/trustedCertificateBundlePath``) and a certificate for
    /// the host name: host name verification is always on. Host patterns, wildcards and
    /// ports behave as for pinned policies, and a policy of the same host that names the
    /// port wins over a portless one, whichever of the two is pinned.
    ///
    /// ```swift
    /// let weather = try TrustPolicy.systemRoots(host: "api.weather.example")
    /// ```
    ///
    /// - Warning: Nothing is pinned. Any certificate authority the system trusts can issue a
    ///   certificate that is accepted for this host, so there is no protection against a
    ///   mis-issued certificate or a compromised CA, and a token sent to the host is exposed
    ///   to whoever holds such a certificate. Pin the hosts whose keys you control (or whose
    ///   CA you know) with ``init(host:port:pins:pinnedCertificateAuthorities:clientCertificate:)``.
    ///
    /// - Parameters:
    ///   - host: A host name, an IP address, or `*.` followed by a domain of at least two
    ///     labels. No scheme, port or path.
    ///   - port: The one port the policy covers (1–65535), or `nil` for every port.
    ///   - clientCertificate: The client certificate for mutual TLS.
    /// - Returns: A policy with no ``pins`` and no ``pinnedCertificateAuthorities``.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` for a malformed host pattern or a
    ///   port outside 1–65535.
    public static func systemRoots(
        host: String,
        port: Int? = nil,
        clientCertificate: ClientCertificate? = nil
    ) throws -> TrustPolicy {
        TrustPolicy(
            pattern: try pattern(host, port: port),
            port: port,
            pins: [],
            pinnedCertificateAuthorities: nil,
            clientCertificate: clientCertificate,
            provider: nil,
            pinMode: .enforce
        )
    }

    private init(
        pattern: HostPattern,
        port: Int?,
        pins: [SPKIPin],
        pinnedCertificateAuthorities: String?,
        clientCertificate: ClientCertificate?,
        provider: ClientCertificateProvider?,
        pinMode: PinMode
    ) {
        self.pattern = pattern
        self.host = pattern.text
        self.port = port
        self.pins = pins
        self.pinnedCertificateAuthorities = pinnedCertificateAuthorities
        self.clientCertificate = clientCertificate
        self.clientCertificateProvider = provider
        self.pinMode = pinMode
    }

    /// The host pattern, after checking the port.
    private static func pattern(_ host: String, port: Int?) throws -> HostPattern {
        let pattern = try HostPattern(host)
        if let port, !(1...65535).contains(port) {
            throw CourierError.invalidConfiguration(
                "the trust policy for \(pattern.text) names port \(port); a port is 1–65535",
                host: pattern.text
            )
        }
        return pattern
    }

    /// Whether the policy applies to a host and port.
    ///
    /// - Parameters:
    ///   - host: A host name or IP address, in any case, with or without a trailing dot; an
    ///     IPv6 address with or without brackets.
    ///   - port: The port a connection goes to.
    /// - Returns: Whether ``host`` names the host or its wildcard covers it, and ``port`` is
    ///   `nil` or `port`.
    public func matches(host: String, port: Int) -> Bool {
        pattern.matches(Authority.normalizedHost(host)) && (self.port == nil || self.port == port)
    }

    /// `host` or `host:port`, for messages.
    var authorityDescription: String {
        guard let port else { return host }
        return host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)"
    }
}
