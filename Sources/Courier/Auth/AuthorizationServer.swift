public import Foundation

/// The endpoints of an OAuth 2.0 authorization server.
///
/// Only the token endpoint is required. The authorization endpoint serves the
/// authorization-code grant, the revocation endpoint serves logout (RFC 7009). Write them
/// down, or find them from the issuer with ``discover(issuer:transport:cache:logger:)``.
///
/// ```swift
/// let server = AuthorizationServer(
///     tokenEndpoint: URL(string: "https://login.example.com/oauth/token")!,
///     authorizationEndpoint: URL(string: "https://login.example.com/oauth/authorize")!,
///     revocationEndpoint: URL(string: "https://login.example.com/oauth/revoke")!
/// )
/// ```
public struct AuthorizationServer: Sendable, Hashable {
    /// Where grants are sent (RFC 6749 §3.2).
    public var tokenEndpoint: URL
    /// Where the user authorizes the client (RFC 6749 §3.1).
    public var authorizationEndpoint: URL?
    /// Where tokens are revoked (RFC 7009 §2).
    public var revocationEndpoint: URL?
    /// Where resource servers introspect tokens (RFC 7662 §2); Courier does not call it, a
    /// gateway built on Courier may.
    public var introspectionEndpoint: URL?
    /// The issuer identifier, set by ``discover(issuer:transport:cache:logger:)``.
    public var issuer: URL?
    /// The client authentication methods the token endpoint accepts, as its metadata lists
    /// them (`token_endpoint_auth_methods_supported`); `nil` when unknown. ``ResourceAccess``
    /// refuses a confidential client whose method the server does not list (public clients,
    /// `none`, are not checked: servers often leave it out).
    public var supportedClientAuthentications: Set<OAuth2ClientCredentials.AuthenticationMethod>?
    /// Whether the server binds the access tokens it issues over mutual TLS to the client
    /// certificate the token request presented (RFC 8705 §3; its metadata's
    /// `tls_client_certificate_bound_access_tokens`, which
    /// ``discover(issuer:transport:cache:logger:)`` reads). `false` by default.
    ///
    /// A bound token records that certificate (``OAuth2Token/certificateThumbprint``) and
    /// goes only over connections presenting it. A JWT access token whose `cnf` claim names a
    /// certificate is bound whatever this says.
    public var issuesCertificateBoundTokens: Bool = false

    /// Creates the endpoints.
    ///
    /// - Parameters:
    ///   - tokenEndpoint: The token endpoint.
    ///   - authorizationEndpoint: The authorization endpoint.
    ///   - revocationEndpoint: The revocation endpoint.
    public init(tokenEndpoint: URL, authorizationEndpoint: URL? = nil, revocationEndpoint: URL? = nil) {
        self.tokenEndpoint = tokenEndpoint
        self.authorizationEndpoint = authorizationEndpoint
        self.revocationEndpoint = revocationEndpoint
    }

    /// The endpoints at the usual paths under `baseURL`: `/oauth/token`, `/oauth/authorize`
    /// and `/oauth/revoke` unless given otherwise.
    ///
    /// - Parameters:
    ///   - baseURL: The server's origin, with an optional path prefix.
    ///   - tokenPath: The token endpoint's path.
    ///   - authorizationPath: The authorization endpoint's path.
    ///   - revocationPath: The revocation endpoint's path.
    public init(
        baseURL: URL,
        tokenPath: String = "/oauth/token",
        authorizationPath: String = "/oauth/authorize",
        revocationPath: String = "/oauth/revoke"
    ) {
        func join(_ path: String) -> URL {
            var base = baseURL.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            return URL(string: base + (path.hasPrefix("/") ? path : "/" + path)) ?? baseURL
        }
        self.init(
            tokenEndpoint: join(tokenPath),
            authorizationEndpoint: join(authorizationPath),
            revocationEndpoint: join(revocationPath)
        )
    }
}

/// An OAuth 2.0 client: its id, its secret when it has one, and how it authenticates at the
/// token endpoint (RFC 6749 §2.3).
///
/// The `description` never shows the secret.
public struct OAuth2ClientCredentials: Sendable, Hashable, CustomStringConvertible {
    /// How the client authenticates at the token and revocation endpoints.
    public enum Authentication: String, Sendable, Hashable {
        /// HTTP Basic with the form-encoded id and secret (`client_secret_basic`, RFC 6749
        /// §2.3.1). The default for confidential clients.
        case basic = "client_secret_basic"
        /// `client_id` and `client_secret` in the form body (`client_secret_post`).
        case body = "client_secret_post"
        /// A public client: `client_id` in the form body, no secret (`none`).
        case none
    }

    /// The client id.
    public var clientID: String
    /// The client secret; `nil` for a public client.
    public var clientSecret: String?
    /// How the client authenticates with its secret, or as a public client; not used when
    /// ``assertion`` is set.
    public var authentication: Authentication
    /// How the client signs a JWT assertion that authenticates it (RFC 7523 §2.2):
    /// ``Assertion/privateKey(_:)`` for `private_key_jwt`, ``Assertion/clientSecret`` for
    /// `client_secret_jwt`. When set, it replaces ``authentication``; `nil` by default.
    public var assertion: Assertion?
    /// The `aud` claim of the client's assertions; `nil`, the default, sends the token
    /// endpoint's URL, which RFC 7523 §3 and OpenID Connect accept. Set it when the server
    /// wants its issuer identifier instead.
    public var assertionAudience: String?
    /// The key the client's tokens are bound to (DPoP, RFC 9449); `nil`, the default, for
    /// bearer tokens.
    ///
    /// With a key, every grant the client sends (refresh included) and every resource request
    /// its tokens go with carries a fresh proof signed with it, and its tokens are sent as
    /// `Authorization: DPoP <token>`. See <doc:SenderConstrainedTokens>.
    ///
    /// ```swift
    /// var client = OAuth2ClientCredentials(clientID: "my-service", clientSecret: secret)
    /// client.dpopKey = try DPoPKey(pemFile: "/etc/myapp/dpop-key.pem")
    /// ```
    public var dpopKey: DPoPKey?
    /// Whether a token endpoint that answers a proof with a Bearer token is refused, with
    /// ``CourierError/Kind/invalidTokenResponse`` (`true`, the default), or its token used as a
    /// bearer token (`false`, for a server that may not support DPoP yet). Only read when
    /// ``dpopKey`` is set.
    public var requiresDPoP: Bool = true

    /// Creates a confidential client that authenticates with HTTP Basic, or a public client
    /// when `clientSecret` is `nil`.
    ///
    /// - Parameters:
    ///   - clientID: The client id.
    ///   - clientSecret: The secret, `nil` for a public client.
    ///   - authentication: How to authenticate; by default Basic with a secret, none without.
    public init(clientID: String, clientSecret: String? = nil, authentication: Authentication? = nil) {
        self.clientID = clientID
        self.clientSecret = clientSecret
        self.authentication = authentication ?? (clientSecret == nil ? .none : .basic)
    }

    /// The id and method, never the secret or the key.
    public var description: String {
        var text = "OAuth2ClientCredentials(\(clientID), \(method)"
        if let key = assertion?.key { text += ", \(key)" }
        if let dpopKey { text += ", \(dpopKey)" }
        return text + (clientSecret == nil ? ")" : ", secret \(Redaction.placeholder))")
    }
}

extension AuthorizationServer {
    /// The `grant_type` of a token request (RFC 6749 §4, and extension grants by URI, §4.5).
    public struct GrantType: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The value of `grant_type`.
        public let rawValue: String

        /// Creates a grant type.
        ///
        /// - Parameter rawValue: The value of `grant_type`: a registered name or an absolute URI.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// RFC 6749 §4.1.3.
        public static let authorizationCode = AuthorizationServer.GrantType(rawValue: "authorization_code")
        /// RFC 6749 §4.3.2.
        public static let password = AuthorizationServer.GrantType(rawValue: "password")
        /// RFC 6749 §4.4.2.
        public static let clientCredentials = AuthorizationServer.GrantType(rawValue: "client_credentials")
        /// RFC 6749 §6.
        public static let refreshToken = AuthorizationServer.GrantType(rawValue: "refresh_token")
        /// RFC 8693 §2.1.
        public static let tokenExchange = AuthorizationServer.GrantType(
            rawValue: "urn:ietf:params:oauth:grant-type:token-exchange"
        )
        /// RFC 7523 §2.1.
        public static let jwtBearer = AuthorizationServer.GrantType(
            rawValue: "urn:ietf:params:oauth:grant-type:jwt-bearer"
        )
        /// RFC 8628 §3.4.
        public static let deviceCode = AuthorizationServer.GrantType(
            rawValue: "urn:ietf:params:oauth:grant-type:device_code"
        )

        /// The value.
        public var description: String { rawValue }
    }
}

extension AuthorizationServer {
    /// An RFC 8693 token type identifier (§3), such as the one for access tokens.
    public struct TokenTypeIdentifier: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The URI.
        public let rawValue: String

        /// Creates an identifier.
        ///
        /// - Parameter rawValue: The URI.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// An OAuth 2.0 access token.
        public static let accessToken = AuthorizationServer.TokenTypeIdentifier(
            rawValue: "urn:ietf:params:oauth:token-type:access_token"
        )
        /// An OAuth 2.0 refresh token.
        public static let refreshToken = AuthorizationServer.TokenTypeIdentifier(
            rawValue: "urn:ietf:params:oauth:token-type:refresh_token"
        )
        /// An OpenID Connect ID token.
        public static let idToken = AuthorizationServer.TokenTypeIdentifier(
            rawValue: "urn:ietf:params:oauth:token-type:id_token"
        )
        /// A JWT.
        public static let jwt = AuthorizationServer.TokenTypeIdentifier(
            rawValue: "urn:ietf:params:oauth:token-type:jwt"
        )

        /// The URI.
        public var description: String { rawValue }
    }
}
