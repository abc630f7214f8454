internal import CCurlShim
public import Foundation

/// One certificate of the chain a server presents, as verified: whom it names, who issued
/// it, when it expires, and the ``SPKIPin`` of its key.
///
/// Read a server's chain to choose what to pin:
///
/// ```swift
/// let chain = try await ServerCertificate.verifiedChain(host: "api.example.com")
/// for certificate in chain {
///     print(certificate.subject, certificate.pin)
/// }
/// ```
///
/// The pins are those a ``TrustPolicy`` matches against the verified chain of every
/// connection, leaf first and the trusted root last.
public struct ServerCertificate: Sendable, Hashable {
    /// The subject's distinguished name, as RFC 2253 writes it (`CN=api.example.com,O=Example`).
    public let subject: String
    /// The issuer's distinguished name, as RFC 2253 writes it.
    public let issuer: String
    /// The end of the certificate's validity (its `notAfter`).
    public let notValidAfter: Date
    /// The SPKI SHA-256 pin of the certificate's public key.
    public let pin: SPKIPin

    /// Creates a certificate description.
    ///
    /// - Parameters:
    ///   - subject: The subject's distinguished name.
    ///   - issuer: The issuer's distinguished name.
    ///   - notValidAfter: The end of the validity.
    ///   - pin: The pin of the public key.
    public init(subject: String, issuer: String, notValidAfter: Date, pin: SPKIPin) {
        self.subject = subject
        self.issuer = issuer
        self.notValidAfter = notValidAfter
        self.pin = pin
    }

    /// Connects to a server, verifies its chain and host name, and returns the verified
    /// chain, leaf first; nothing is sent after the TLS handshake.
    ///
    /// The connection is direct (no proxy) and verifies as Courier's transport does: TLS 1.2
    /// at least, the chain against `trustedCertificateBundlePath` or the system's CA store,
    /// the leaf against `host`.
    ///
    /// - Parameters:
    ///   - host: The host name or IP address.
    ///   - port: The port, 443 by default.
    ///   - trustedCertificateBundlePath: A PEM bundle of the CAs to trust instead of the
    ///     system's, for a private CA.
    ///   - timeout: The longest connecting, and then the handshake, may each take.
    /// - Returns: The certificates of the verified chain, leaf first.
    /// - Throws: ``CourierError``: ``CourierError/Kind/couldNotResolveHost``,
    ///   ``CourierError/Kind/couldNotConnect``, ``CourierError/Kind/connectTimedOut``, or
    ///   ``CourierError/Kind/tlsFailure`` (with ``CourierError/curlCode`` 60 when the
    ///   certificate did not verify, 35 when the handshake failed).
    public static func verifiedChain(
        host: String,
        port: Int = 443,
        trustedCertificateBundlePath: String? = nil,
        timeout: Duration = .seconds(10)
    ) async throws -> [ServerCertificate] {
        let milliseconds = Int32(
            clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000
        )
        return try await withCheckedThrowingContinuation { continuation in
            // The handshake blocks: it gets a thread of its own, not one of the cooperative pool.
            Thread.detachNewThread {
                continuation.resume(
                    with: Result {
                        try read(
                            host: host,
                            port: port,
                            bundle: trustedCertificateBundlePath,
                            milliseconds: milliseconds
                        )
                    }
                )
            }
        }
    }

    private static func read(
        host: String,
        port: Int,
        bundle: String?,
        milliseconds: Int32
    ) throws -> [ServerCertificate] {
        let capacity = 16
        var certificates = [ccourier_peer_certificate](repeating: ccourier_peer_certificate(), count: capacity)
        var count = 0
        var error = [CChar](repeating: 0, count: 512)
        let status = certificates.withUnsafeMutableBufferPointer { buffer in
            ccourier_peer_chain(
                host,
                Int32(port),
                bundle,
                milliseconds,
                buffer.baseAddress!,
                capacity,
                &count,
                &error,
                error.count
            )
        }
        let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let message = "\(host):\(port): \(reason)"
        switch status {
        case CCOURIER_PEER_CHAIN_OK:
            return try certificates.prefix(count).map { try ServerCertificate($0) }
        case CCOURIER_PEER_CHAIN_UNRESOLVED:
            throw CourierError(kind: .couldNotResolveHost, message: message, host: host)
        case CCOURIER_PEER_CHAIN_UNREACHABLE:
            throw CourierError(kind: .couldNotConnect, message: message, host: host)
        case CCOURIER_PEER_CHAIN_TIMED_OUT:
            throw CourierError(kind: .connectTimedOut, message: message, host: host)
        case CCOURIER_PEER_CHAIN_UNVERIFIED:
            throw CourierError(kind: .tlsFailure, message: message, host: host, curlCode: 60, curlDetail: reason)
        default:
            throw CourierError(kind: .tlsFailure, message: message, host: host, curlCode: 35, curlDetail: reason)
        }
    }

    private init(_ certificate: ccourier_peer_certificate) throws {
        var certificate = certificate
        let subject = withUnsafeBytes(of: &certificate.subject) {
            String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self)
        }
        let issuer = withUnsafeBytes(of: &certificate.issuer) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        let digest = withUnsafeBytes(of: &certificate.spki_sha256) { Array($0) }
        self.init(
            subject: subject,
            issuer: issuer,
            notValidAfter: Date(timeIntervalSince1970: TimeInterval(certificate.not_after)),
            pin: try SPKIPin(sha256: digest)
        )
    }
}
