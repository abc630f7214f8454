/// Whether a transport is secured — trusted hosts only, each connection checked against its
/// host's policy — or plain.
///
/// Trust is configured in one place: the transport that makes the connections
/// (``CurlTransport/Configuration/security``). Every ``Session`` and every client on that
/// transport enforces it. A **secured** configuration is what secured resource access runs
/// on, and only a secured transport ever carries a credential.
///
/// ```swift
/// let security = try SecurityConfiguration.secured(
///     trust: [
///         try TrustPolicy(host: "api.example.com",
///                         pins: [try SPKIPin("sha256//current…="), try SPKIPin("sha256//backup…=")]),
///     ],
///     detectsDebugger: true
/// )
/// let transport = CurlTransport(configuration: .init(security: security))
/// let session = Session(configuration: .init(baseURL: URL(string: "https://api.example.com")!), transport: transport)
/// ```
///
/// On a secured transport, before anything is sent, a request is refused when:
/// - it is not HTTPS (``CourierError/Kind/insecureScheme``);
/// - its host and port, given as the base URL or as an absolute URL, have no ``TrustPolicy``
///   (``CourierError/Kind/untrustedHost``), or its authority holds user information
///   (``CourierError/Kind/invalidURL``);
/// - the caller set `Authorization` or `User-Agent`, which Courier owns
///   (``CourierError/Kind/reservedHeader``);
/// - debugger detection is on and a tracer is attached (``CourierError/Kind/debuggerAttached``).
///
/// Every TLS connection is then checked against the policy of the host it goes to, also
/// after a redirect: hosts without a policy are refused in the handshake, pins are matched
/// against the verified chain (a ``TrustPolicy/systemRoots(host:port:clientCertificate:)``
/// policy needs the verified chain only), host names are verified, and the TLS version is
/// at least ``minimumTLSVersion``.
/// Redirects never go from HTTPS to HTTP, and libcurl drops `Authorization` and `Cookie`
/// when a redirect leaves the origin.
///
/// ``unpinned`` is the plain configuration: TLS is verified against the system's CA store
/// (or the transport's bundle), nothing is pinned, any host may be reached, and no
/// credential is ever attached.
public struct SecurityConfiguration: Sendable, Hashable, CustomStringConvertible {
    /// The lowest TLS version a connection may use.
    public enum TLSVersion: Sendable, Hashable {
        /// TLS 1.2.
        case v1_2
        /// TLS 1.3.
        case v1_3
    }

    /// Whether the configuration is secured.
    public let isSecured: Bool
    /// The trusted hosts and how each is pinned (or that it is not); empty for ``unpinned``.
    public let trustPolicies: [TrustPolicy]
    /// The lowest TLS version of a secured connection: 1.2 by default, 1.3 selectable.
    public let minimumTLSVersion: TLSVersion
    /// Whether a secured request is refused while a debugger or tracer is attached.
    public let detectsDebugger: Bool

    /// The compiled policies; `nil` for ``unpinned``.
    let compiled: CompiledTrust?
    /// Who hears of a verified chain that matches none of its policy's pins.
    let pinMismatchHandler: (@Sendable (PinMismatchReport) -> Void)?

    private init(
        isSecured: Bool,
        minimumTLSVersion: TLSVersion,
        detectsDebugger: Bool,
        compiled: CompiledTrust?,
        pinMismatchHandler: (@Sendable (PinMismatchReport) -> Void)? = nil
    ) {
        self.isSecured = isSecured
        self.trustPolicies = compiled?.policies ?? []
        self.minimumTLSVersion = minimumTLSVersion
        self.detectsDebugger = detectsDebugger
        self.compiled = compiled
        self.pinMismatchHandler = pinMismatchHandler
    }

    /// The same configuration with other compiled policies (the same policies with other
    /// client certificates from their closures).
    func replacingCompiled(_ compiled: CompiledTrust) -> SecurityConfiguration {
        SecurityConfiguration(
            isSecured: isSecured,
            minimumTLSVersion: minimumTLSVersion,
            detectsDebugger: detectsDebugger,
            compiled: compiled,
            pinMismatchHandler: pinMismatchHandler
        )
    }

    /// A secured configuration: only the hosts of `trust`, over HTTPS, each checked against
    /// its policy.
    ///
    /// Credentials may go to every host of `trust`: pinned ones, and those whose policy
    /// explicitly trusts the system's roots (``TrustPolicy/systemRoots(host:port:clientCertificate:)``).
    /// The certificate files named by the policies are read now.
    ///
    /// - Parameters:
    ///   - trust: One policy per host or wildcard; at least one.
    ///   - minimumTLSVersion: The lowest TLS version accepted (1.2 by default).
    ///   - detectsDebugger: Whether to refuse requests while a debugger is attached
    ///     (Linux: a non-zero `TracerPid` in `/proc/self/status`). Off by default.
    /// - Returns: The configuration.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` for an empty trust set, a host
    ///   pattern given twice, an unreadable CA bundle or client certificate, or a wrong key
    ///   password; ``CourierError/Kind/unsupportedTLSBackend`` when libcurl does not use
    ///   OpenSSL, so the policies could not be enforced.
    public static func secured(
        trust: [TrustPolicy],
        minimumTLSVersion: TLSVersion = .v1_2,
        detectsDebugger: Bool = false
    ) throws -> SecurityConfiguration {
        guard !trust.isEmpty else {
            throw CourierError.invalidConfiguration("a secured configuration needs at least one TrustPolicy")
        }
        try TLSBackend.check()
        return SecurityConfiguration(
            isSecured: true,
            minimumTLSVersion: minimumTLSVersion,
            detectsDebugger: detectsDebugger,
            compiled: try CompiledTrust(policies: trust)
        )
    }

    /// A secured configuration that reports every TLS connection whose verified chain
    /// matches none of its policy's pins.
    ///
    /// The same as ``secured(trust:minimumTLSVersion:detectsDebugger:)``, and `handler` is
    /// called once per such connection with a ``PinMismatchReport`` — whether its policy's
    /// ``TrustPolicy/pinMode`` let it go ahead (``TrustPolicy/PinMode/audit``) or refused it
    /// (``TrustPolicy/PinMode/enforce``). The `courier.tls.pin.mismatches` counter (dimensions
    /// `host` and `mode`) counts them with or without a handler.
    ///
    /// ```swift
    /// let security = try SecurityConfiguration.secured(
    ///     trust: [try TrustPolicy(host: "api.example.com", pins: [nextPin], pinMode: .audit)]
    /// ) { report in
    ///     print("\(report.host):\(report.port) would be refused; its chain: \(report.chainPins)")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - trust: One policy per host or wildcard; at least one.
    ///   - minimumTLSVersion: The lowest TLS version accepted (1.2 by default).
    ///   - detectsDebugger: Whether to refuse requests while a debugger is attached.
    ///   - handler: Called with each report, off the transport's thread; it may take its time.
    /// - Returns: The configuration.
    /// - Throws: As ``secured(trust:minimumTLSVersion:detectsDebugger:)``.
    public static func secured(
        trust: [TrustPolicy],
        minimumTLSVersion: TLSVersion = .v1_2,
        detectsDebugger: Bool = false,
        reportingPinMismatches handler: @escaping @Sendable (PinMismatchReport) -> Void
    ) throws -> SecurityConfiguration {
        let configuration = try secured(
            trust: trust,
            minimumTLSVersion: minimumTLSVersion,
            detectsDebugger: detectsDebugger
        )
        return SecurityConfiguration(
            isSecured: true,
            minimumTLSVersion: minimumTLSVersion,
            detectsDebugger: detectsDebugger,
            compiled: configuration.compiled,
            pinMismatchHandler: handler
        )
    }

    /// The plain configuration: nothing pinned, any host, and never a credential.
    ///
    /// TLS certificates and host names are still verified. Use it for plain HTTP(S)
    /// access; secured resource access refuses a session configured this way.
    public static let unpinned = SecurityConfiguration(
        isSecured: false,
        minimumTLSVersion: .v1_2,
        detectsDebugger: false,
        compiled: nil
    )

    /// The plain configuration with a higher TLS minimum: nothing pinned, any host, never a
    /// credential, and no connection below `minimumTLSVersion`.
    ///
    /// - Parameter minimumTLSVersion: The lowest TLS version accepted.
    /// - Returns: The configuration.
    public static func unpinned(minimumTLSVersion: TLSVersion) -> SecurityConfiguration {
        SecurityConfiguration(
            isSecured: false,
            minimumTLSVersion: minimumTLSVersion,
            detectsDebugger: false,
            compiled: nil
        )
    }

    /// The policy that applies to a host and port, or `nil` when they are not trusted.
    ///
    /// An exact host wins over a wildcard, and a policy that names the port over one for
    /// every port.
    ///
    /// - Parameters:
    ///   - host: A host name or IP address.
    ///   - port: The port a connection goes to (443 by default).
    /// - Returns: The policy.
    public func trustPolicy(forHost host: String, port: Int = 443) -> TrustPolicy? {
        compiled?.policy(forHost: Authority.normalizedHost(host), port: port)
    }

    /// Configurations are equal when they are both unpinned, or secured with the same
    /// policies, TLS minimum and debugger detection (the pin mismatch handler is not compared).
    public static func == (lhs: SecurityConfiguration, rhs: SecurityConfiguration) -> Bool {
        if let left = lhs.compiled, let right = rhs.compiled, left === right {
            return lhs.minimumTLSVersion == rhs.minimumTLSVersion && lhs.detectsDebugger == rhs.detectsDebugger
        }
        return lhs.isSecured == rhs.isSecured && lhs.trustPolicies == rhs.trustPolicies
            && lhs.minimumTLSVersion == rhs.minimumTLSVersion && lhs.detectsDebugger == rhs.detectsDebugger
    }

    /// Hashes what `==` compares.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(isSecured)
        hasher.combine(trustPolicies)
        hasher.combine(minimumTLSVersion)
        hasher.combine(detectsDebugger)
    }

    /// `unpinned`, or `secured` with the trusted host patterns, each trusted through the
    /// system's roots without pins marked so (never a secret).
    public var description: String {
        guard isSecured else {
            return minimumTLSVersion == .v1_3
                ? "SecurityConfiguration.unpinned(TLS ≥ 1.3)" : "SecurityConfiguration.unpinned"
        }
        let hosts = trustPolicies.map { $0.isPinned ? $0.host : "\($0.host) (system roots)" }
            .joined(separator: ", ")
        return "SecurityConfiguration.secured(\(hosts); TLS ≥ \(minimumTLSVersion == .v1_3 ? "1.3" : "1.2")"
            + "\(detectsDebugger ? "; debugger detection" : ""))"
    }
}
