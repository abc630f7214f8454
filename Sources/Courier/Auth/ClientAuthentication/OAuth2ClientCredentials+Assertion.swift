extension OAuth2ClientCredentials {
    /// A confidential client that authenticates with `private_key_jwt` (RFC 7523 §2.2): every
    /// token and revocation request carries a fresh JWT signed with `privateKey`, and the
    /// client has no secret.
    ///
    /// ```swift
    /// let client = OAuth2ClientCredentials(
    ///     clientID: "my-service",
    ///     privateKey: try .ecdsaP256(pemFile: "/etc/myapp/assertion-key.pem", keyID: "k1")
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - clientID: The client id, sent as the assertion's `iss` and `sub`.
    ///   - privateKey: The key registered with the authorization server.
    ///   - assertionAudience: The `aud` claim; the token endpoint's URL when `nil`.
    public init(clientID: String, privateKey: ClientAssertionKey, assertionAudience: String? = nil) {
        self.init(clientID: clientID, clientSecret: nil, authentication: .privateKeyJWT)
        self.assertionKey = privateKey
        self.assertionAudience = assertionAudience
    }

    /// Checks that a client with a JWT method has what it signs with: a secret for
    /// `client_secret_jwt`, a key for `private_key_jwt`.
    ///
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when it does not.
    func validate() throws {
        switch authentication {
        case .clientSecretJWT:
            guard let secret = clientSecret, !secret.isEmpty else {
                throw CourierError.invalidConfiguration(
                    "the client \(clientID) authenticates with \(authentication.rawValue) but has no client secret"
                )
            }
        case .privateKeyJWT:
            guard assertionKey != nil else {
                throw CourierError.invalidConfiguration(
                    "the client \(clientID) authenticates with private_key_jwt but has no assertion key"
                )
            }
        case .basic, .body, .none:
            break
        }
    }

    /// What signs the client's assertions, for the JWT methods; `nil` for the others.
    var assertionSigner: ClientAssertion.Signer? {
        switch authentication {
        case .privateKeyJWT: assertionKey.map(ClientAssertion.Signer.privateKey)
        case .clientSecretJWT: clientSecret.map(ClientAssertion.Signer.secret)
        case .basic, .body, .none: nil
        }
    }
}
