extension OAuth2ClientCredentials {
    /// How a client signs the JWT that authenticates it at the token and revocation
    /// endpoints (RFC 7523 §2.2).
    ///
    /// The JWT goes in the form body as `client_assertion`, with
    /// `client_assertion_type=urn:ietf:params:oauth:client-assertion-type:jwt-bearer`, and a
    /// new one is made for every request. Neither the key nor an assertion is ever described
    /// or logged.
    public struct Assertion: Sendable, Hashable, CustomStringConvertible {
        enum Signing: Sendable, Hashable {
            case privateKey(ClientAssertionKey)
            case clientSecret
        }

        let signing: Signing

        /// `private_key_jwt`: signed RS256 or ES256 with the client's private key. The client
        /// has no shared secret at all.
        ///
        /// - Parameter key: The key registered with the authorization server.
        /// - Returns: The assertion method.
        public static func privateKey(_ key: ClientAssertionKey) -> Assertion { Assertion(signing: .privateKey(key)) }

        /// `client_secret_jwt` (OpenID Connect Core §9): signed HS256 with the client secret
        /// as the key, so the secret itself never leaves the process.
        public static let clientSecret = Assertion(signing: .clientSecret)

        /// The private key, for ``privateKey(_:)``; `nil` for ``clientSecret``.
        public var key: ClientAssertionKey? {
            if case .privateKey(let key) = signing { return key }
            return nil
        }

        /// The method's name: `private_key_jwt` or `client_secret_jwt`.
        public var description: String { method.rawValue }

        /// The method, as authorization server metadata names it.
        var method: AuthenticationMethod {
            switch signing {
            case .privateKey: .privateKeyJWT
            case .clientSecret: .clientSecretJWT
            }
        }
    }

    /// A client authentication method by its registered name (RFC 8414 §2,
    /// `token_endpoint_auth_methods_supported`): an open set, so a server's list keeps
    /// methods Courier does not use.
    public struct AuthenticationMethod: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The registered name.
        public let rawValue: String

        /// Creates a method from its registered name.
        ///
        /// - Parameter rawValue: The name, such as `private_key_jwt`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// HTTP Basic with the client id and secret.
        public static let clientSecretBasic = AuthenticationMethod(rawValue: "client_secret_basic")
        /// The client id and secret in the form body.
        public static let clientSecretPost = AuthenticationMethod(rawValue: "client_secret_post")
        /// A JWT signed with the client secret.
        public static let clientSecretJWT = AuthenticationMethod(rawValue: "client_secret_jwt")
        /// A JWT signed with the client's private key.
        public static let privateKeyJWT = AuthenticationMethod(rawValue: "private_key_jwt")
        /// A public client: no authentication.
        public static let none = AuthenticationMethod(rawValue: "none")

        /// The registered name.
        public var description: String { rawValue }
    }

    /// The method the client authenticates with: its ``assertion``'s when it has one, else
    /// its ``authentication``.
    public var method: AuthenticationMethod {
        assertion?.method ?? AuthenticationMethod(rawValue: authentication.rawValue)
    }

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
        self.init(clientID: clientID, clientSecret: nil, authentication: Authentication.none)
        self.assertion = .privateKey(privateKey)
        self.assertionAudience = assertionAudience
    }

    /// A client that authenticates with a JWT assertion: ``Assertion/clientSecret`` signs with
    /// `clientSecret` (`client_secret_jwt`), ``Assertion/privateKey(_:)`` with a key.
    ///
    /// ```swift
    /// let client = OAuth2ClientCredentials(clientID: "my-app", clientSecret: appSecret, assertion: .clientSecret)
    /// ```
    ///
    /// - Parameters:
    ///   - clientID: The client id, sent as the assertion's `iss` and `sub`.
    ///   - clientSecret: The secret, the HMAC key of ``Assertion/clientSecret``.
    ///   - assertion: How the assertion is signed.
    ///   - assertionAudience: The `aud` claim; the token endpoint's URL when `nil`.
    public init(clientID: String, clientSecret: String?, assertion: Assertion, assertionAudience: String? = nil) {
        self.init(clientID: clientID, clientSecret: clientSecret)
        self.assertion = assertion
        self.assertionAudience = assertionAudience
    }

    /// Checks that a `client_secret_jwt` client has a secret to sign with.
    ///
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when it does not.
    func validate() throws {
        guard assertion == .clientSecret, (clientSecret ?? "").isEmpty else { return }
        throw CourierError.invalidConfiguration(
            "the client \(clientID) authenticates with client_secret_jwt but has no client secret"
        )
    }

    /// What signs the client's assertions; `nil` for a client without ``assertion``.
    var assertionSigner: ClientAssertionJWT.Signer? {
        switch assertion?.signing {
        case .privateKey(let key): .privateKey(key)
        case .clientSecret: clientSecret.map(ClientAssertionJWT.Signer.secret)
        case nil: nil
        }
    }
}
