import Crypto
import Foundation
import _CryptoExtras

/// The private key a client signs its `private_key_jwt` assertions with (RFC 7523 §2.2):
/// an RSA key for RS256 or a P-256 key for ES256.
///
/// Make one from PEM text or a PEM file. The key is read when it is made, so an unreadable
/// file, a malformed PEM, an RSA key shorter than 2048 bits or a key of the wrong type is a
/// ``CourierError`` with kind ``CourierError/Kind/invalidConfiguration`` then — never at the
/// first token request. Encrypted PEM keys are not read: decrypt the key when you load it
/// from your secret store.
///
/// ```swift
/// let key = try ClientAssertionKey.rsa(pemFile: "/etc/myapp/client-key.pem", keyID: "2026-01")
/// let client = OAuth2ClientCredentials(clientID: "my-service", privateKey: key)
/// ```
///
/// The key material never appears in ``description``, `debugDescription` or `dump(_:)`.
public struct ClientAssertionKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The JWS algorithm (`alg`, RFC 7518 §3.1) of the assertions a key signs.
    public struct Algorithm: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The `alg` value.
        public let rawValue: String

        /// Creates an algorithm from its `alg` value.
        ///
        /// - Parameter rawValue: The `alg` value, such as `RS256`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// RSASSA-PKCS1-v1_5 with SHA-256.
        public static let rs256 = Algorithm(rawValue: "RS256")
        /// ECDSA with P-256 and SHA-256.
        public static let es256 = Algorithm(rawValue: "ES256")
        /// HMAC with SHA-256, keyed with the client secret (`client_secret_jwt`).
        public static let hs256 = Algorithm(rawValue: "HS256")

        /// The `alg` value.
        public var description: String { rawValue }
    }

    enum Material: @unchecked Sendable {
        // `P256.Signing.PrivateKey` is an immutable value over a BoringSSL key that is only
        // read after it is made; swift-crypto 3 does not mark it Sendable on Linux.
        case rsa(_RSA.Signing.PrivateKey)
        case p256(P256.Signing.PrivateKey)
    }

    let material: Material
    /// The signing algorithm: ``Algorithm/rs256`` or ``Algorithm/es256``.
    public let algorithm: Algorithm
    /// The key id sent as the assertion's `kid` header, so that a server holding several
    /// keys of the client (a JWKS) finds the right one; `nil` sends no `kid`.
    public let keyID: String?
    /// The DER of the public key: what identifies the key for `==` and hashing.
    let publicKeyDER: Data

    private init(material: Material, keyID: String?) {
        self.material = material
        self.keyID = keyID
        switch material {
        case .rsa(let key):
            algorithm = .rs256
            publicKeyDER = key.publicKey.derRepresentation
        case .p256(let key):
            algorithm = .es256
            publicKeyDER = key.publicKey.derRepresentation
        }
    }

    /// An RSA key for RS256 assertions.
    ///
    /// - Parameters:
    ///   - pem: The unencrypted private key in PEM: PKCS#8 (`BEGIN PRIVATE KEY`) or PKCS#1
    ///     (`BEGIN RSA PRIVATE KEY`). At least 2048 bits.
    ///   - keyID: The `kid` header to send, if the server needs one.
    /// - Returns: The key.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the PEM holds no usable RSA key.
    public static func rsa(pem: String, keyID: String? = nil) throws -> ClientAssertionKey {
        do {
            return ClientAssertionKey(material: .rsa(try _RSA.Signing.PrivateKey(pemRepresentation: pem)), keyID: keyID)
        } catch {
            throw CourierError.invalidConfiguration(
                "the client assertion key is not an unencrypted PEM RSA private key of at least 2048 bits "
                    + "(PKCS#8 or PKCS#1)"
            )
        }
    }

    /// An RSA key for RS256 assertions, read from a PEM file.
    ///
    /// - Parameters:
    ///   - pemFile: The path of the unencrypted PEM private key (PKCS#8 or PKCS#1).
    ///   - keyID: The `kid` header to send, if the server needs one.
    /// - Returns: The key.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the file cannot be read or
    ///   holds no usable RSA key.
    public static func rsa(pemFile: String, keyID: String? = nil) throws -> ClientAssertionKey {
        try rsa(pem: readPEM(pemFile), keyID: keyID)
    }

    /// A P-256 key for ES256 assertions.
    ///
    /// - Parameters:
    ///   - pem: The unencrypted private key in PEM: PKCS#8 (`BEGIN PRIVATE KEY`) or SEC 1
    ///     (`BEGIN EC PRIVATE KEY`).
    ///   - keyID: The `kid` header to send, if the server needs one.
    /// - Returns: The key.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the PEM holds no P-256 key.
    public static func ecdsaP256(pem: String, keyID: String? = nil) throws -> ClientAssertionKey {
        do {
            return ClientAssertionKey(
                material: .p256(try P256.Signing.PrivateKey(pemRepresentation: pem)),
                keyID: keyID
            )
        } catch {
            throw CourierError.invalidConfiguration(
                "the client assertion key is not an unencrypted PEM P-256 private key (PKCS#8 or SEC 1)"
            )
        }
    }

    /// A P-256 key for ES256 assertions, read from a PEM file.
    ///
    /// - Parameters:
    ///   - pemFile: The path of the unencrypted PEM private key (PKCS#8 or SEC 1).
    ///   - keyID: The `kid` header to send, if the server needs one.
    /// - Returns: The key.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the file cannot be read or
    ///   holds no P-256 key.
    public static func ecdsaP256(pemFile: String, keyID: String? = nil) throws -> ClientAssertionKey {
        try ecdsaP256(pem: readPEM(pemFile), keyID: keyID)
    }

    private static func readPEM(_ path: String) throws -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8)
        else {
            throw CourierError.invalidConfiguration("cannot read the client assertion key file \(path)")
        }
        return text
    }

    /// Signs the JWS signing input (`header.payload`, RFC 7515 §5.1).
    ///
    /// - Parameter input: The signing input's bytes.
    /// - Returns: The signature as JWS wants it: PKCS#1 v1.5 for RS256, `r ‖ s` for ES256.
    func sign(_ input: Data) throws -> Data {
        switch material {
        case .rsa(let key): try key.signature(for: input, padding: .insecurePKCS1v1_5).rawRepresentation
        case .p256(let key): try key.signature(for: input).rawRepresentation
        }
    }

    /// Two keys are equal when their public keys, algorithms and key ids are.
    public static func == (lhs: ClientAssertionKey, rhs: ClientAssertionKey) -> Bool {
        lhs.algorithm == rhs.algorithm && lhs.keyID == rhs.keyID && lhs.publicKeyDER == rhs.publicKeyDER
    }

    /// Hashes the public key, the algorithm and the key id.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(algorithm)
        hasher.combine(keyID)
        hasher.combine(publicKeyDER)
    }

    /// The algorithm and key id, never the key.
    public var description: String {
        "ClientAssertionKey(\(algorithm)" + (keyID.map { ", kid: \($0))" } ?? ")")
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the key material.
    public var customMirror: Mirror {
        Mirror(self, children: ["algorithm": algorithm.rawValue, "keyID": keyID as Any])
    }
}
