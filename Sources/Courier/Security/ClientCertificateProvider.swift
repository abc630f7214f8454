/// The closure a ``TrustPolicy`` asks for its client certificate, and how long before the
/// certificate's end it asks again.
///
/// Two policies are equal only when they share the same provider (the closure cannot be
/// compared).
final class ClientCertificateProvider: Sendable, Hashable {
    /// Loads the certificate and its key.
    let load: @Sendable () async throws -> ClientCertificate
    /// How long before the certificate's `notAfter` a transport asks for the next one.
    let renewalMargin: Duration

    init(renewalMargin: Duration, load: @escaping @Sendable () async throws -> ClientCertificate) {
        self.renewalMargin = renewalMargin
        self.load = load
    }

    static func == (lhs: ClientCertificateProvider, rhs: ClientCertificateProvider) -> Bool { lhs === rhs }

    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension TrustPolicy {
    /// Creates a trust policy that pins its hosts and presents a client certificate that a
    /// closure gives, asked again when the certificate nears its end.
    ///
    /// A ``CurlTransport`` asks the closure before its first request to a host of the policy
    /// (that request waits for it), and again once the certificate is within
    /// `renewalMargin` of its `notAfter`: requests then go on with the current certificate
    /// while the next one loads, and connections made after it loaded present it. Connections
    /// made with the old certificate are not reused for requests after that (see
    /// ``CurlTransport/replaceTrust(with:)``). When a renewal fails, the transport keeps the
    /// current certificate and asks again a little later.
    ///
    /// ```swift
    /// let gateway = try TrustPolicy(host: "api.example.com", pins: [currentPin], renewalMargin: .seconds(3600)) {
    ///     ClientCertificate(certificateFile: "/run/identity/client.pem", privateKeyFile: "/run/identity/client-key.pem")
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - host: A host name, an IP address, or `*.` followed by a domain of at least two
    ///     labels. No scheme, port or path.
    ///   - port: The one port the policy covers (1–65535), or `nil` for every port.
    ///   - pins: The SPKI pins; several to allow a backup key.
    ///   - pinnedCertificateAuthorities: The path of a PEM bundle of the only trusted roots.
    ///   - pinMode: Whether a chain that matches no pin is refused or only reported.
    ///   - renewalMargin: How long before the certificate's end the closure is asked for the
    ///     next one (an hour by default).
    ///   - clientCertificate: Gives the client certificate; its files are read when it returns.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` as for
    ///   ``init(host:port:pins:pinnedCertificateAuthorities:clientCertificate:)``, or for a
    ///   negative margin.
    public init(
        host: String,
        port: Int? = nil,
        pins: [SPKIPin] = [],
        pinnedCertificateAuthorities: String? = nil,
        pinMode: PinMode = .enforce,
        renewalMargin: Duration = .seconds(3600),
        clientCertificate: @escaping @Sendable () async throws -> ClientCertificate
    ) throws {
        guard renewalMargin >= .zero else {
            throw CourierError.invalidConfiguration(
                "the renewal margin of the client certificate for \(host) is negative",
                host: host
            )
        }
        try self.init(
            pinning: host,
            port: port,
            pins: pins,
            pinnedCertificateAuthorities: pinnedCertificateAuthorities,
            clientCertificate: nil,
            provider: ClientCertificateProvider(renewalMargin: renewalMargin, load: clientCertificate),
            pinMode: pinMode
        )
    }
}
