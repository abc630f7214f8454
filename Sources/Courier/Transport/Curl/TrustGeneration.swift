internal import CCurlShim
import CoreMetrics

/// One trust set a secured ``CurlTransport`` has used: the configuration and its compiled
/// policies, numbered from 0 in the order the transport took them up.
///
/// A transfer keeps the generation it started under, and so does every connection it
/// makes: the generation's cipher-list tag (``cipherList``) differs from every other
/// generation's, and libcurl reuses a connection — or resumes a TLS session — only for a
/// transfer whose TLS options match. OpenSSL points into a generation's compiled policies
/// for as long as a connection made under it exists, so each such connection holds a
/// reference to it (released when libcurl frees the connection's `SSL_CTX`); with the
/// transfers, they are all that keep an earlier generation alive.
///
/// `Sendable`: immutable.
final class TrustGeneration: Sendable {
    /// The generation's number; 0 for the transport's first trust set.
    let number: UInt64
    /// The trust set.
    let security: SecurityConfiguration
    /// Its compiled policies.
    let compiled: CompiledTrust
    /// `CURLOPT_SSL_CIPHER_LIST` for the generation's transfers: the process's default
    /// cipher list with a tag of this generation, or `nil` (libcurl's default) for
    /// generation 0, so that a transport whose trust never changes sets nothing new.
    let cipherList: String?
    /// Where pin mismatch counts go.
    let metricsFactory: any MetricsFactory

    /// Creates generation `number` of `security`, a secured configuration.
    ///
    /// - Throws: ``CourierError/Kind/unsupportedTLSBackend`` when the process's OpenSSL has
    ///   no default TLS 1.2 cipher list to tag, so that generations could not be kept apart.
    init(number: UInt64, security: SecurityConfiguration, metricsFactory: any MetricsFactory) throws {
        guard let compiled = security.compiled else {
            preconditionFailure("a trust generation is made for a secured configuration only")
        }
        self.number = number
        self.security = security
        self.compiled = compiled
        self.metricsFactory = metricsFactory
        guard number > 0 else {
            cipherList = nil
            return
        }
        var buffer = [CChar](repeating: 0, count: 16 << 10)
        guard ccourier_tls_generation_cipher_list(number, &buffer, buffer.count) == 1 else {
            throw CourierError(
                kind: .unsupportedTLSBackend,
                message: "OpenSSL offers no TLS 1.2 cipher list by default here, so connections made under "
                    + "different trust sets cannot be kept apart; make a new transport instead"
            )
        }
        cipherList = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Reports a verified chain that matched none of a policy's pins (loop thread, in the
    /// handshake): counts it, and hands the report to the configuration's handler on
    /// another thread.
    func reportMismatch(host: String, port: Int, policyIndex: Int, chain: UnsafeBufferPointer<UInt8>) {
        guard compiled.policies.indices.contains(policyIndex) else { return }
        let policy = compiled.policies[policyIndex]
        let length = 32  // CCOURIER_PIN_LENGTH
        let chainPins = stride(from: 0, to: chain.count - length + 1, by: length).compactMap {
            try? SPKIPin(sha256: chain[$0..<($0 + length)])
        }
        Counter(
            label: PinMismatchMetrics.label,
            dimensions: [("host", host), ("mode", policy.pinMode.rawValue)],
            factory: metricsFactory
        ).increment()
        guard let handler = security.pinMismatchHandler else { return }
        let report = PinMismatchReport(
            host: host,
            port: port,
            chainPins: chainPins,
            expectedPins: policy.pins,
            mode: policy.pinMode
        )
        Task.detached { handler(report) }
    }
}
