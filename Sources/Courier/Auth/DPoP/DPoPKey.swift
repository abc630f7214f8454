public import Crypto
import Foundation

/// The key that binds a client's tokens to the application (DPoP, RFC 9449): an ES256
/// (P-256) key whose public half the authorization server writes into each token it issues.
///
/// With a key, every token request and every resource request carries a fresh proof signed
/// with it, and the tokens are useless without it: a token copied out of a log, a proxy or a
/// store cannot be sent by anyone who does not also hold the private key.
///
/// Give a client a key you keep yourself, or let Courier make one:
///
/// ```swift
/// var client = OAuth2ClientCredentials(clientID: "my-service", clientSecret: secret)
/// client.dpopKey = try DPoPKey(pemFile: "/etc/myapp/dpop-key.pem")   // yours, never written anywhere
/// client.dpopKey = DPoPKey.generate()                                 // Courier's, kept with the tokens
/// ```
///
/// A key you supply is only ever used to sign; Courier never writes it anywhere. A key from
/// ``generate()`` is written next to each token bound to it, in the configured token store
/// (sealed like the tokens in the encrypted stores), so that a restarted process — or another
/// process of a fleet sharing the store — still holds the key its stored tokens are bound to.
///
/// The key material never appears in ``description``, `debugDescription` or `dump(_:)`.
public struct DPoPKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The private key, in a box: `P256.Signing.PrivateKey` is an immutable value over a
    /// BoringSSL key that is only read after it is made; swift-crypto 3 does not mark it
    /// Sendable on Linux.
    struct Material: @unchecked Sendable {
        /// The key.
        let privateKey: P256.Signing.PrivateKey
    }

    /// The private key.
    let material: Material
    /// Whether Courier made the key (``generate()``), and so keeps it with the tokens bound to it.
    let isGenerated: Bool
    /// The RFC 7638 SHA-256 thumbprint of the public key, base64url without padding: the
    /// `jkt` that the authorization server binds tokens to (RFC 9449 §6.1).
    public let thumbprint: String
    /// The public key as a JWK's `x` and `y` members (base64url of the coordinates).
    let coordinates: (x: String, y: String)
    /// The proof's JOSE header, base64url-encoded: the same for every proof of the key.
    let encodedHeader: String

    /// A key you supply: it signs proofs and is never written anywhere by Courier.
    ///
    /// - Parameter privateKey: The P-256 private key.
    public init(privateKey: P256.Signing.PrivateKey) {
        self.init(privateKey: privateKey, isGenerated: false)
    }

    /// A key you supply, from PEM text.
    ///
    /// - Parameter pem: The unencrypted P-256 private key in PEM: PKCS#8 (`BEGIN PRIVATE KEY`)
    ///   or SEC 1 (`BEGIN EC PRIVATE KEY`).
    /// - Throws: ``CourierError`` with kind ``CourierError/Kind/invalidConfiguration`` when
    ///   the PEM holds no P-256 private key.
    public init(pem: String) throws {
        do {
            self.init(privateKey: try P256.Signing.PrivateKey(pemRepresentation: pem))
        } catch {
            throw CourierError.invalidConfiguration(
                "the DPoP key is not an unencrypted PEM P-256 private key (PKCS#8 or SEC 1)"
            )
        }
    }

    /// A key you supply, read from a PEM file.
    ///
    /// - Parameter pemFile: The path of the unencrypted P-256 private key in PEM.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the file cannot be read or
    ///   holds no P-256 private key.
    public init(pemFile: String) throws {
        guard let data = FileManager.default.contents(atPath: pemFile), let text = String(data: data, encoding: .utf8)
        else {
            throw CourierError.invalidConfiguration("cannot read the DPoP key file \(pemFile)")
        }
        try self.init(pem: text)
    }

    /// A new random key that Courier keeps: it is stored with every token bound to it, in the
    /// configured token store, and read back with them.
    ///
    /// Make it once per configuration (a new key per process start is fine: tokens read from
    /// the store keep the key they were bound to).
    ///
    /// - Returns: The key.
    public static func generate() -> DPoPKey {
        DPoPKey(privateKey: P256.Signing.PrivateKey(), isGenerated: true)
    }

    /// The public key, as the authorization server sees it in each proof's `jwk`.
    public var publicKey: P256.Signing.PublicKey { material.privateKey.publicKey }

    /// Creates a key.
    ///
    /// - Parameters:
    ///   - privateKey: The private key.
    ///   - isGenerated: Whether Courier made it and keeps it with its tokens.
    init(privateKey: P256.Signing.PrivateKey, isGenerated: Bool) {
        material = Material(privateKey: privateKey)
        self.isGenerated = isGenerated
        let raw = privateKey.publicKey.rawRepresentation  // x ‖ y, 32 bytes each
        let x = Base64URL.encode(raw.prefix(32))
        let y = Base64URL.encode(raw.suffix(32))
        coordinates = (x, y)
        thumbprint = Self.thumbprint(ofJWK: [("crv", "P-256"), ("kty", "EC"), ("x", x), ("y", y)])
        let header =
            "{\"alg\":\"ES256\",\"jwk\":{\"crv\":\"P-256\",\"kty\":\"EC\",\"x\":\"\(x)\",\"y\":\"\(y)\"},"
            + "\"typ\":\"dpop+jwt\"}"
        encodedHeader = Base64URL.encode(Data(header.utf8))
    }

    /// The RFC 7638 thumbprint of a JWK: SHA-256 over the JSON object of its required members,
    /// in lexicographic order of their names, without white space; base64url without padding.
    ///
    /// - Parameter members: The required members as (name, string value), in lexicographic
    ///   order (`crv`, `kty`, `x`, `y` for an EC key; `e`, `kty`, `n` for RSA). The values are
    ///   base64url text and names, which need no JSON escaping.
    /// - Returns: The thumbprint.
    static func thumbprint(ofJWK members: [(name: String, value: String)]) -> String {
        let json = "{" + members.map { "\"\($0.name)\":\"\($0.value)\"" }.joined(separator: ",") + "}"
        return Base64URL.encode(Data(SHA256.hash(data: Data(json.utf8))))
    }

    /// Signs a JWS signing input with ES256.
    ///
    /// - Parameter input: The signing input's bytes (`header.payload`).
    /// - Returns: The signature as JWS wants it: `r ‖ s`, 64 bytes.
    func sign(_ input: Data) throws -> Data {
        try material.privateKey.signature(for: input).rawRepresentation
    }

    /// The private key's 32 bytes, for storing a generated key with its tokens.
    var rawPrivateKey: Data { material.privateKey.rawRepresentation }

    /// Two keys are equal when their public keys are (and both or neither are generated).
    public static func == (lhs: DPoPKey, rhs: DPoPKey) -> Bool {
        lhs.thumbprint == rhs.thumbprint && lhs.isGenerated == rhs.isGenerated
    }

    /// Hashes the thumbprint.
    public func hash(into hasher: inout Hasher) { hasher.combine(thumbprint) }

    /// The thumbprint, never the key.
    public var description: String {
        "DPoPKey(ES256, jkt \(thumbprint)\(isGenerated ? ", generated" : ""))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the key material.
    public var customMirror: Mirror {
        Mirror(self, children: ["thumbprint": thumbprint, "isGenerated": isGenerated])
    }
}
