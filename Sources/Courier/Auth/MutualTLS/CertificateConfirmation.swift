import Foundation

/// The certificate a JWT access token confirms (RFC 8705 §3.1): the `x5t#S256` member of its
/// `cnf` claim.
///
/// Read without verifying the token's signature: the client is not the token's audience and
/// learns only which of its own certificates the token must travel with. A token that is not
/// a JWT, or names no certificate, confirms none.
enum CertificateConfirmation {
    /// The `cnf."x5t#S256"` of `accessToken`, `nil` when it is not a JWT or has none.
    ///
    /// - Parameter accessToken: The access token as the server issued it.
    /// - Returns: The certificate thumbprint, base64url.
    static func thumbprint(of accessToken: String) -> String? {
        let parts = accessToken.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[1].count <= 16 << 10,
            let payload = Base64URL.decode(String(parts[1])),
            let claims = (try? JSONSerialization.jsonObject(with: payload)) as? [String: Any],
            let confirmation = claims["cnf"] as? [String: Any],
            let thumbprint = confirmation["x5t#S256"] as? String, !thumbprint.isEmpty
        else { return nil }
        return thumbprint
    }
}
