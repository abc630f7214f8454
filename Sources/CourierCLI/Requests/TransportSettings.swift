#if CommandLine
import Courier
import Foundation

/// The transport a command connects through: its CA bundle, its trust policy and its proxy.
enum TransportSettings {
    /// The transport configuration for requests to `url`.
    ///
    /// Without pins or a client certificate the transport is unpinned: certificates and host
    /// names are verified against the system's CAs (or `--cacert`). With `--pin` or `--cert`,
    /// the transport is secured for the URL's host and port alone: pins are matched against
    /// the verified chain, and a redirect to another host is refused.
    static func configuration(
        for url: URL,
        tls: TLSOptions,
        proxy: String?,
        allowsHTTP2: Bool,
        password: (String) -> String?
    ) throws -> CurlTransport.Configuration {
        let certificate = try clientCertificate(tls, password: password)
        var security = SecurityConfiguration.unpinned
        if !tls.pins.isEmpty || certificate != nil {
            guard url.scheme?.lowercased() == "https", let host = url.host else {
                throw CommandFailure.usage("--pin and --cert need an https:// URL")
            }
            let pins = try TrustInput.pins(tls.pins)
            let port = url.port ?? 443
            let policy =
                pins.isEmpty
                ? try TrustPolicy.systemRoots(host: host, port: port, clientCertificate: certificate)
                : try TrustPolicy(host: host, port: port, pins: pins, clientCertificate: certificate)
            security = try SecurityConfiguration.secured(trust: [policy])
        }
        try TrustInput.checkBundle(tls.caBundle)
        return CurlTransport.Configuration(
            proxy: try proxy.map(Self.proxy) ?? .environment,
            trustedCertificateBundlePath: tls.caBundle,
            allowsHTTP2: allowsHTTP2,
            security: security
        )
    }

    /// `-x`: an http:// or https:// proxy URL (http:// when no scheme is given).
    static func proxy(_ text: String) throws -> CurlTransport.Configuration.Proxy {
        let url = text.contains("://") ? text : "http://" + text
        guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
            parsed.host != nil
        else {
            throw CommandFailure.usage("-x \(text.debugDescription) is not an http:// or https:// proxy URL")
        }
        return .url(url)
    }

    /// `--cert` with `--key`, or a PKCS#12 file with `--cert-type p12`.
    static func clientCertificate(_ tls: TLSOptions, password: (String) -> String?) throws -> ClientCertificate? {
        guard let path = tls.certificate else { return nil }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw CommandFailure.usage("--cert: cannot read \(path.debugDescription)")
        }
        let variable = tls.certificatePasswordVariable ?? "COURIER_CERT_PASSWORD"
        let secret = ProcessInfo.processInfo.environment[variable]
        if tls.certificateType.lowercased() == "p12" {
            return try ClientCertificate.pkcs12(path: path, password: secret ?? password("Password for \(path): "))
        }
        guard let key = tls.key else { throw CommandFailure.usage("--cert needs --key") }
        return ClientCertificate(certificateFile: path, privateKeyFile: key, password: secret)
    }
}
#endif
