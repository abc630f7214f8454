internal import CCurlShim

/// Whether the libcurl in use can enforce Courier's trust policies.
///
/// Pins, pinned roots and the refusal of hosts outside the trust set are enforced by an
/// OpenSSL verify hook that Courier installs on the `SSL_CTX` libcurl hands to
/// `CURLOPT_SSL_CTX_FUNCTION`. That only works when libcurl's active TLS backend is OpenSSL
/// of the same major version as the OpenSSL Courier links. Checked once per process; a
/// secured configuration cannot be made otherwise, and a secured transfer fails before it
/// connects (fail closed: a host is never reached without its policy).
enum TLSBackend {
    /// `nil` when the backend can enforce the policies, otherwise why not.
    static let unsupportedReason: CourierError? = {
        CurlMultiLoop.globalInit
        var curlBackend: UnsafePointer<CChar>?
        var linked: UnsafePointer<CChar>?
        let ok = ccourier_tls_backend_is_openssl(&curlBackend, &linked)
        guard ok != 1 else { return nil }
        let backend = curlBackend.map { String(cString: $0) } ?? "none"
        let openSSL = linked.map { String(cString: $0) } ?? "unknown"
        return CourierError(
            kind: .unsupportedTLSBackend,
            message:
                "libcurl's TLS backend is \(backend), but trust policies need OpenSSL of the version Courier links "
                + "(\(openSSL)); install libcurl4-openssl-dev. Secured requests are refused rather than sent unchecked"
        )
    }()

    /// Throws ``CourierError/Kind/unsupportedTLSBackend`` unless the policies can be enforced.
    static func check() throws {
        if let unsupportedReason { throw unsupportedReason }
    }
}
