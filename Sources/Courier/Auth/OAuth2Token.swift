public import Foundation

extension OAuth2Token {
    /// A token type (RFC 6749 §7.1), such as `Bearer`. Compared without regard to case, as the
    /// RFC asks.
    public struct TokenType: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
        /// The type as the server sent it.
        public let rawValue: String

        /// Creates a token type.
        ///
        /// - Parameter rawValue: The type, such as `"Bearer"` or `"bearer"`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// RFC 6750 bearer tokens.
        public static let bearer = OAuth2Token.TokenType(rawValue: "Bearer")

        /// RFC 9449 DPoP tokens: bound to a ``DPoPKey``, sent as `Authorization: DPoP <token>`
        /// with a proof signed by that key.
        public static let dpop = OAuth2Token.TokenType(rawValue: "DPoP")

        /// Types are equal when their names are, ignoring case.
        public static func == (lhs: OAuth2Token.TokenType, rhs: OAuth2Token.TokenType) -> Bool {
            lhs.rawValue.lowercased() == rhs.rawValue.lowercased()
        }

        /// Hashes the lower-cased name.
        public func hash(into hasher: inout Hasher) { hasher.combine(rawValue.lowercased()) }

        /// The name.
        public var description: String { rawValue }
    }
}

/// An access token with what came with it: type, expiry, refresh token and scope.
///
/// A token is a value; the clients of ``ResourceAccess`` obtain and renew tokens, and a
/// ``TokenStore`` keeps them.
/// Its `description` never shows the token or the refresh token, so logging a token is safe.
///
/// Expiry is a wall-clock `Date` because tokens outlive the process in a store. A token
/// without ``expiresAt`` (the server sent no `expires_in`) is used until a resource server
/// rejects it.
public struct OAuth2Token: Sendable, Hashable, Codable, CustomStringConvertible {
    /// The access token.
    public var accessToken: String
    /// The token type: ``OAuth2Token/TokenType/bearer`` (RFC 6750), or
    /// ``OAuth2Token/TokenType/dpop`` for a token bound to a key (RFC 9449).
    public var tokenType: OAuth2Token.TokenType
    /// When the access token was issued, as this process saw the response.
    public var issuedAt: Date
    /// When the access token expires, from `expires_in`; `nil` when the server did not say.
    public var expiresAt: Date?
    /// The refresh token, when the server issued one.
    public var refreshToken: String?
    /// The granted scope: the response's `scope`, or the requested scope when the response
    /// omitted it (RFC 6749 §5.1); `nil` when neither is known.
    public var scope: Set<Scope>?
    /// RFC 8693 `issued_token_type`, for exchanged tokens.
    public var issuedTokenType: String?
    /// Other string or number members of the token response, for grant strategies of
    /// servers that send more (`id_token`, a user id, …). Treat as secret.
    public var additionalFields: [String: String]
    /// The RFC 7638 thumbprint (`jkt`) of the ``DPoPKey`` the token is bound to; `nil` for a
    /// token bound to no key (Bearer).
    ///
    /// Courier sends a bound token only with a proof of that key: a token read from a store
    /// whose thumbprint is not the configured key's is never sent, but renewed.
    public var keyThumbprint: String?
    /// The `x5t#S256` (base64url of the SHA-256 of the DER) of the client certificate the token
    /// is bound to (RFC 8705 §3); `nil` for a token bound to no certificate.
    ///
    /// Set from the token's own `cnf` claim when the access token is a JWT, else from the
    /// certificate the token request's connection presented when the server binds its tokens
    /// (``AuthorizationServer/issuesCertificateBoundTokens``). Courier sends such a token only
    /// over a connection presenting that certificate: when the transport presents another one
    /// (it was rotated), the token is renewed first.
    public var certificateThumbprint: String?
    /// The key the token is bound to, when Courier generated it (``DPoPKey/generate()``): kept
    /// with the token, so that a store that keeps the token keeps the key too. `nil` for a key
    /// the application supplied, which is never written anywhere.
    var generatedKey: StoredDPoPKey? = nil

    /// Creates a token.
    ///
    /// - Parameters:
    ///   - accessToken: The access token.
    ///   - tokenType: The type, Bearer by default.
    ///   - issuedAt: When it was issued.
    ///   - expiresAt: When it expires.
    ///   - refreshToken: The refresh token.
    ///   - scope: The granted scope.
    ///   - issuedTokenType: RFC 8693 `issued_token_type`.
    ///   - additionalFields: Other members of the response.
    public init(
        accessToken: String,
        tokenType: OAuth2Token.TokenType = .bearer,
        issuedAt: Date = Date(),
        expiresAt: Date? = nil,
        refreshToken: String? = nil,
        scope: Set<Scope>? = nil,
        issuedTokenType: String? = nil,
        additionalFields: [String: String] = [:]
    ) {
        self.accessToken = accessToken
        self.tokenType = tokenType
        self.issuedAt = issuedAt
        self.expiresAt = expiresAt
        self.refreshToken = refreshToken
        self.scope = scope
        self.issuedTokenType = issuedTokenType
        self.additionalFields = additionalFields
    }

    /// The lifetime the server gave, `nil` when unknown.
    public var lifetime: TimeInterval? { expiresAt.map { $0.timeIntervalSince(issuedAt) } }

    /// Whether the token must be renewed at `date`: it has expired, or it expires within
    /// `leeway`.
    ///
    /// The leeway is capped at half the token's lifetime, so a server that issues tokens
    /// for fewer seconds than the leeway does not make every request renew.
    ///
    /// - Parameters:
    ///   - date: The time to check, usually now.
    ///   - leeway: How long before expiry a token counts as expired.
    /// - Returns: Whether the token should be renewed.
    public func needsRenewal(at date: Date, leeway: Duration = .zero) -> Bool {
        guard let renewalDate = renewalDate(leeway: leeway) else { return false }
        return date >= renewalDate
    }

    /// Whether the token has expired at `date`; never for a token without expiry.
    func hasExpired(at date: Date) -> Bool {
        guard let expiresAt else { return false }
        return date >= expiresAt
    }

    /// When ``needsRenewal(at:leeway:)`` starts to say yes; `nil` for a token without expiry.
    func renewalDate(leeway: Duration) -> Date? {
        guard let expiresAt else { return nil }
        var margin = max(0, leeway.inSeconds)
        if let lifetime, lifetime > 0 { margin = min(margin, lifetime / 2) }
        return expiresAt.addingTimeInterval(-margin)
    }

    /// The `Authorization` header value: `Bearer <token>` (RFC 6750 §2.1), `DPoP <token>`
    /// (RFC 9449 §7.1) — each spelt so whatever case the server used — or the token's own type
    /// for other types.
    public var authorizationValue: String {
        let type = tokenType == .bearer ? "Bearer" : tokenType == .dpop ? "DPoP" : tokenType.rawValue
        return "\(type) \(accessToken)"
    }

    /// The type, expiry and scope, never the tokens.
    public var description: String {
        var text = "OAuth2Token(\(tokenType), access token \(Redaction.placeholder)"
        if refreshToken != nil { text += ", refresh token \(Redaction.placeholder)" }
        if let expiresAt { text += ", expires \(expiresAt)" }
        if let scope { text += ", scope \"\(Scope.parameterValue(of: scope))\"" }
        if let keyThumbprint { text += ", bound to jkt \(keyThumbprint)" }
        if let certificateThumbprint { text += ", bound to x5t#S256 \(certificateThumbprint)" }
        return text + ")"
    }
}
