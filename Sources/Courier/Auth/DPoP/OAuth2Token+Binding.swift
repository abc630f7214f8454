extension OAuth2Token {
    /// The token as Courier hands it to the application: without the generated DPoP key kept
    /// with it (``generatedKey``), which only token stores receive. Encoding a token the
    /// application holds — to log it, or to pass it to other code — never writes a private key.
    var handedOut: OAuth2Token {
        guard generatedKey != nil else { return self }
        var token = self
        token.generatedKey = nil
        return token
    }

    /// How a token may be sent by a client whose configured key is known.
    enum Binding: Sendable, Hashable {
        /// As a bearer token, without a proof.
        case bearer
        /// With a proof of this key, the one the token is bound to.
        case key(DPoPKey)
        /// Not at all: it is bound to a key the client does not hold, or it is a bearer token
        /// where the client requires DPoP. It is renewed, never sent.
        case unusable
    }

    /// How the token may be sent by a client configured with `configured`.
    ///
    /// A bound token goes only with a proof of its own key: the configured key when the
    /// application supplied it; when Courier generates the keys, the key kept with the token
    /// (a token read from a store is bound to the key of the process that obtained it) or the
    /// configured one.
    ///
    /// - Parameters:
    ///   - configured: The client's ``OAuth2ClientCredentials/dpopKey``.
    ///   - requiresDPoP: The client's ``OAuth2ClientCredentials/requiresDPoP``.
    /// - Returns: How to send it.
    func binding(configured: DPoPKey?, requiresDPoP: Bool) -> Binding {
        guard let keyThumbprint else {
            if tokenType == .dpop || (configured != nil && requiresDPoP) { return .unusable }
            return .bearer
        }
        guard let configured else { return .unusable }
        if configured.isGenerated, let own = generatedKey?.key, own.thumbprint == keyThumbprint { return .key(own) }
        return configured.thumbprint == keyThumbprint ? .key(configured) : .unusable
    }
}
