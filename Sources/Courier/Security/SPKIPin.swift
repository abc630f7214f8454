internal import CCurlShim
import Foundation

/// The SHA-256 digest of a certificate's public key (its DER `SubjectPublicKeyInfo`): what
/// a ``TrustPolicy`` pins.
///
/// A pin names a key, not a certificate, so it survives certificate renewals that keep the
/// key. It is written as curl and OkHttp write it, `sha256//` followed by the base64 digest:
///
/// ```swift
/// let pin = try SPKIPin("sha256//r8udi/Mxd6pLO7y7hZyUMWq8YnFnIWXCqeHsTDRqy8c=")
/// let fromFile = try SPKIPin(certificateFile: "/etc/myapp/backup-key.pem")
/// ```
///
/// Compute one from a server with `openssl`:
///
/// ```sh
/// openssl s_client -connect api.example.com:443 -servername api.example.com </dev/null 2>/dev/null \
///   | openssl x509 -pubkey -noout | openssl pkey -pubin -outform der \
///   | openssl dgst -sha256 -binary | openssl enc -base64
/// ```
///
/// Pins are public values: they appear in errors and may be logged.
public struct SPKIPin: Sendable, Hashable, CustomStringConvertible {
    /// The 32 bytes of the SHA-256 digest.
    public let sha256: [UInt8]

    /// The prefix of the textual form.
    public static let prefix = "sha256//"

    /// Creates a pin from its textual form.
    ///
    /// - Parameter text: `sha256//` followed by the base64 digest, or the base64 digest alone.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the text is not the base64
    ///   of 32 bytes.
    public init(_ text: String) throws {
        let base64 = text.hasPrefix(Self.prefix) ? String(text.dropFirst(Self.prefix.count)) : text
        guard let data = Data(base64Encoded: base64), data.count == 32 else {
            throw CourierError.invalidConfiguration(
                "\(text.debugDescription) is not an SPKI pin: expected sha256// and the base64 of a 32-byte SHA-256 digest"
            )
        }
        self.sha256 = Array(data)
    }

    /// Creates a pin from the 32 bytes of a SHA-256 digest.
    ///
    /// - Parameter digest: The digest of a DER `SubjectPublicKeyInfo`.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` unless there are 32 bytes.
    public init(sha256 digest: some Sequence<UInt8>) throws {
        let bytes = Array(digest)
        guard bytes.count == 32 else {
            throw CourierError.invalidConfiguration("an SPKI SHA-256 pin has 32 bytes, not \(bytes.count)")
        }
        self.sha256 = bytes
    }

    /// The pin of the first certificate in a PEM or DER file (for a chain file, the leaf).
    ///
    /// - Parameter path: A PEM file (one certificate or a chain) or a DER certificate.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the file cannot be read or
    ///   holds no certificate.
    public init(certificateFile path: String) throws {
        self = try Self.pins(fromCertificateFile: path)[0]
    }

    /// The pins of every certificate in a PEM file, in file order, or of the one
    /// certificate in a DER file.
    ///
    /// Pin a whole chain file to accept a server whose chain contains any of its keys.
    ///
    /// - Parameter path: A PEM or DER certificate file.
    /// - Returns: At least one pin.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the file cannot be read or
    ///   holds no certificate.
    public static func pins(fromCertificateFile path: String) throws -> [SPKIPin] {
        let capacity = 64
        var digests = [UInt8](repeating: 0, count: capacity * 32)
        var count = 0
        var error = [CChar](repeating: 0, count: 512)
        let ok = digests.withUnsafeMutableBufferPointer { digests in
            ccourier_spki_sha256_from_file(path, digests.baseAddress!, capacity, &count, &error, error.count)
        }
        guard ok == 1 else {
            throw CourierError.invalidConfiguration(
                String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            )
        }
        return try (0..<count).map { index in try SPKIPin(sha256: digests[(index * 32)..<(index * 32 + 32)]) }
    }

    /// The base64 digest, without the prefix.
    public var base64: String { Data(sha256).base64EncodedString() }

    /// `sha256//` and the base64 digest, as curl writes pins.
    public var description: String { Self.prefix + base64 }
}
