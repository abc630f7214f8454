import Foundation

/// What a transfer asks of the client certificate its connection presents: the transport's
/// side of certificate-bound tokens (RFC 8705 §3).
///
/// Set in ``TransferOptions/certificateBinding`` by Courier's own middleware; a transport that
/// presents client certificates (``CurlTransport``) honours it.
///
/// Plain bytes, no references: ``TransferOptions`` stay trivially copyable, and every request's
/// async frames hold copies of them (a `String` here made each copy retain and release, and the
/// frames that hold them larger).
enum CertificateBinding: Sendable, Hashable {
    /// Tell which certificate the connection presented, in
    /// ``Response/clientCertificateThumbprint``: the token endpoint's requests, whose token may
    /// be bound to it.
    case report
    /// Go only over a connection presenting the certificate with this SHA-256; otherwise send
    /// nothing and throw ``ClientCertificateMismatch``.
    case require(CertificateDigest)
}

/// The SHA-256 of a certificate's DER, as an `x5t#S256` thumbprint names it (RFC 8705 §3.1).
struct CertificateDigest: Sendable, Hashable {
    private let words: (UInt64, UInt64, UInt64, UInt64)

    /// The digest an `x5t#S256` thumbprint (base64url without padding) names. A thumbprint that
    /// names no SHA-256 gives the digest of no certificate Courier presents: zero bytes, the
    /// SHA-256 of nothing anyone can find.
    init(thumbprint: String) {
        self.init(sha256: Base64URL.decode(thumbprint).map(Array.init) ?? [])
    }

    /// The digest of these 32 bytes; any other count gives the zero digest, as above.
    init(sha256 bytes: [UInt8]) {
        var words: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        if bytes.count == 32 {
            withUnsafeMutableBytes(of: &words) { $0.copyBytes(from: bytes) }
        }
        self.words = words
    }

    /// The `x5t#S256` thumbprint that names this digest.
    var thumbprint: String {
        Base64URL.encode(withUnsafeBytes(of: words) { Data($0) })
    }

    static func == (lhs: CertificateDigest, rhs: CertificateDigest) -> Bool {
        lhs.words == rhs.words
    }

    func hash(into hasher: inout Hasher) {
        hasher.combine(words.0)
        hasher.combine(words.1)
        hasher.combine(words.2)
        hasher.combine(words.3)
    }
}

/// A transfer that would have carried a certificate-bound token over a connection presenting
/// another client certificate, or none, and so was not started: nothing was sent.
///
/// Thrown by the transport to the middleware that attached the token, which renews the token
/// (the new one is bound to the certificate in use now) and sends once more.
struct ClientCertificateMismatch: Error, Sendable {
    /// The host the request was for.
    let host: String
    /// The `x5t#S256` the connection presents to that host now, `nil` for none.
    let presented: String?
}
