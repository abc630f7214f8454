/// What a transfer asks of the client certificate its connection presents: the transport's
/// side of certificate-bound tokens (RFC 8705 §3).
///
/// Set in ``TransferOptions/certificateBinding`` by Courier's own middleware; a transport that
/// presents client certificates (``CurlTransport``) honours it.
enum CertificateBinding: Sendable, Hashable {
    /// Tell which certificate the connection presented, in
    /// ``Response/clientCertificateThumbprint``: the token endpoint's requests, whose token may
    /// be bound to it.
    case report
    /// Go only over a connection presenting the certificate with this `x5t#S256` (base64url
    /// of the SHA-256 of its DER); otherwise send nothing and throw
    /// ``ClientCertificateMismatch``.
    case require(String)
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
