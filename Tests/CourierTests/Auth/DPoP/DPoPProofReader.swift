import Crypto
import Foundation
import HTTPTypes

@testable import Courier

/// A DPoP proof taken apart, for tests: its header and claims as JSON objects, and whether its
/// signature verifies with the public key in its own `jwk`.
struct DPoPProofReader {
    let header: [String: Any]
    let claims: [String: Any]
    /// The public key of the header's `jwk`.
    let publicKey: P256.Signing.PublicKey
    /// Whether the ES256 signature verifies with ``publicKey``.
    let signatureIsValid: Bool

    /// Reads a compact JWT; throws when it is not three base64url JSON parts with a P-256 `jwk`.
    init(_ jwt: String) throws {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 3, let headerData = Base64URL.decode(parts[0]), let claimData = Base64URL.decode(parts[1]),
            let signature = Base64URL.decode(parts[2]),
            let header = try JSONSerialization.jsonObject(with: headerData) as? [String: Any],
            let claims = try JSONSerialization.jsonObject(with: claimData) as? [String: Any],
            let jwk = header["jwk"] as? [String: Any], let x = (jwk["x"] as? String).flatMap(Base64URL.decode),
            let y = (jwk["y"] as? String).flatMap(Base64URL.decode)
        else { throw ReadError() }
        self.header = header
        self.claims = claims
        publicKey = try P256.Signing.PublicKey(rawRepresentation: x + y)
        let ecdsa = try P256.Signing.ECDSASignature(rawRepresentation: signature)
        signatureIsValid = publicKey.isValidSignature(ecdsa, for: Data((parts[0] + "." + parts[1]).utf8))
    }

    /// The `jwk` header member.
    var jwk: [String: String] { (header["jwk"] as? [String: String]) ?? [:] }

    /// The RFC 7638 thumbprint of the header's `jwk`, computed from its members.
    var thumbprint: String {
        DPoPKey.thumbprint(ofJWK: ["crv", "kty", "x", "y"].map { ($0, jwk[$0] ?? "") })
    }

    struct ReadError: Error {}
}
