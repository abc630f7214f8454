import Crypto
import Foundation

/// A JWT that authenticates the client at the authorization server (RFC 7523 §2.2, §3):
/// `private_key_jwt` signed with the client's private key, or `client_secret_jwt` signed
/// with HMAC over the client secret (OpenID Connect Core §9).
///
/// Each assertion is made for one request and has its own random `jti`, so a server that
/// remembers `jti`s (RFC 7523 §3, item 7) never sees one twice. Assertions are never logged:
/// `client_assertion` is a redacted form field.
struct ClientAssertionJWT: Sendable {
    /// What an assertion is signed with.
    enum Signer: Sendable {
        /// The client's private key (`private_key_jwt`).
        case privateKey(ClientAssertionKey)
        /// The client secret, as an HMAC key (`client_secret_jwt`).
        case secret(String)

        var algorithm: ClientAssertionKey.Algorithm {
            switch self {
            case .privateKey(let key): key.algorithm
            case .secret: .hs256
            }
        }

        var keyID: String? {
            if case .privateKey(let key) = self { return key.keyID }
            return nil
        }

        func sign(_ input: Data) throws -> Data {
            switch self {
            case .privateKey(let key):
                return try key.sign(input)
            case .secret(let secret):
                let key = SymmetricKey(data: Data(secret.utf8))
                return Data(HMAC<SHA256>.authenticationCode(for: input, using: key))
            }
        }
    }

    /// The `client_assertion_type` of a JWT client assertion (RFC 7523 §2.2).
    static let assertionType = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

    /// How long an assertion is valid: long enough for clock skew and a slow network, short
    /// enough that a captured one is soon useless.
    static let lifetime: TimeInterval = 60

    /// The JOSE header.
    struct Header: Codable, Equatable {
        var alg: String
        var typ: String
        var kid: String?
    }

    /// The claims (RFC 7523 §3).
    struct Claims: Codable, Equatable {
        var iss: String
        var sub: String
        var aud: String
        var jti: String
        var iat: Int
        var exp: Int
    }

    let signer: Signer
    let clientID: String
    /// The `aud` claim: the token endpoint's URL unless configured otherwise.
    let audience: String

    /// Makes and signs a new assertion.
    ///
    /// - Parameters:
    ///   - now: The issue time.
    ///   - jti: The JWT id; a fresh random one by default.
    /// - Returns: The compact serialization `header.claims.signature`.
    func make(now: Date = Date(), jti: String = ClientAssertionJWT.randomID()) throws -> String {
        let issued = Int(now.timeIntervalSince1970)
        let header = Header(alg: signer.algorithm.rawValue, typ: "JWT", kid: signer.keyID)
        let claims = Claims(
            iss: clientID,
            sub: clientID,
            aud: audience,
            jti: jti,
            iat: issued,
            exp: issued + Int(Self.lifetime)
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let input =
            Base64URL.encode(try encoder.encode(header)) + "." + Base64URL.encode(try encoder.encode(claims))
        let signature: Data
        do {
            signature = try signer.sign(Data(input.utf8))
        } catch {
            throw CourierError(
                kind: .invalidConfiguration,
                message: "the client assertion could not be signed with the \(signer.algorithm) key",
                underlying: error
            )
        }
        return input + "." + Base64URL.encode(signature)
    }

    /// 128 random bits from the system's CSPRNG, base64url-encoded: two draws of 64 bits (each
    /// draw is a system call, so not sixteen of 8).
    static func randomID() -> String {
        var generator = SystemRandomNumberGenerator()
        var words = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeBytes(of: &words) { Base64URL.encode(Data($0)) }
    }
}
