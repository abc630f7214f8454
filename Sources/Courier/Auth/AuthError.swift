/// Authorization failed: no user, a grant the server refused, a refresh that failed or looped,
/// a challenge answered with wrong credentials.
///
/// Compare errors by kind with `==` (`error == .userNotAuthenticated`); the other properties
/// say where and why. ``requestKind`` tells which of the four kinds of resource request
/// failed, ``level`` which token, ``oauthError`` what the authorization server answered
/// (RFC 6749 §5.2), ``statusCode`` and ``endpoint`` which HTTP exchange.
///
/// ```swift
/// do {
///     let profile = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
/// } catch let error as AuthError where error == .userNotAuthenticated {
///     showLogin()
/// }
/// ```
///
/// Messages and descriptions never hold a token, a secret or a password.
public struct AuthError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of authorization failure.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// There is no user token, or the user's refresh token was rejected (`invalid_grant`)
        /// and the user's tokens were wiped: the user must authenticate again.
        case userNotAuthenticated
        /// The authorization server rejected the client's credentials (`invalid_client`):
        /// the device or application is not registered or its secret is wrong.
        case clientAuthenticationFailed
        /// The token endpoint refused a grant with an OAuth error other than `invalid_client`
        /// (see ``AuthError/oauthError``): wrong password, invalid code, invalid scope.
        case grantRejected
        /// Renewing a token failed for a reason other than a rejected grant: the token
        /// endpoint could not be reached, answered 5xx, or answered something unreadable.
        case tokenRefreshFailed
        /// The token endpoint answered 2xx with a body that is not a valid token response.
        case invalidTokenResponse
        /// More refreshes than the broker's limit allows in its time window: the resource
        /// server keeps rejecting fresh tokens, so Courier stops instead of looping.
        case excessiveRefresh
        /// The authorization step answered with an error (`access_denied`, …).
        case authorizationDenied
        /// The authorization redirect is unusable: wrong `state` (a possible CSRF), no
        /// `code`, or not the configured redirect URI.
        case invalidAuthorizationResponse
        /// Credentials given for an HTTP authentication challenge were rejected again.
        case challengeFailed
        /// Revoking a token at logout failed; the tokens were wiped locally anyway.
        case revocationFailed
        /// The token store could not be read or written, or is damaged: see the
        /// ``TokenStoreError`` in ``AuthError/underlying``. A damaged store is never read as
        /// a token.
        case tokenStoreFailed
        /// The grant needs something the configuration lacks (a refresh token, a subject
        /// token, a redirect URI, an endpoint).
        case missingConfiguration
    }

    /// The kind of failure.
    public let kind: Kind
    /// What was wrong, for people.
    public let message: String
    /// The kind of resource request that failed, when a client sent one.
    public var requestKind: RequestKind?
    /// The authorization level whose token was involved.
    public var level: AuthorizationLevel?
    /// The authorization server's error response, when there was one.
    public var oauthError: OAuth2Error?
    /// The HTTP status of the exchange that failed (token endpoint, revocation, challenge).
    public var statusCode: Int?
    /// The endpoint of that exchange: method and path, never the query.
    public var endpoint: String?
    /// The error underneath: a ``TransportError``, a ``TokenStoreError``, another `AuthError`.
    public var underlying: (any Error & Sendable)?
    /// Where the error was made (`#fileID`).
    public let file: String
    /// Where the error was made (`#line`).
    public let line: Int

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: The kind of failure.
    ///   - message: What was wrong.
    ///   - level: The authorization level.
    ///   - oauthError: The server's error response.
    ///   - statusCode: The HTTP status.
    ///   - endpoint: The endpoint, without query.
    ///   - underlying: The error underneath.
    ///   - file: Where the error was made.
    ///   - line: Where the error was made.
    public init(
        kind: Kind,
        message: String,
        level: AuthorizationLevel? = nil,
        oauthError: OAuth2Error? = nil,
        statusCode: Int? = nil,
        endpoint: String? = nil,
        underlying: (any Error & Sendable)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.kind = kind
        self.message = message
        self.level = level
        self.oauthError = oauthError
        self.statusCode = statusCode
        self.endpoint = endpoint
        self.underlying = underlying
        self.file = file
        self.line = line
    }

    /// A value that matches every error of `kind`, for `==` comparisons.
    ///
    /// - Parameter kind: The kind to match.
    /// - Returns: An error with that kind and no details.
    public static func kind(_ kind: Kind) -> AuthError { AuthError(kind: kind, message: "") }

    /// Matches any ``Kind/userNotAuthenticated``.
    public static let userNotAuthenticated = kind(.userNotAuthenticated)
    /// Matches any ``Kind/clientAuthenticationFailed``.
    public static let clientAuthenticationFailed = kind(.clientAuthenticationFailed)
    /// Matches any ``Kind/grantRejected``.
    public static let grantRejected = kind(.grantRejected)
    /// Matches any ``Kind/tokenRefreshFailed``.
    public static let tokenRefreshFailed = kind(.tokenRefreshFailed)
    /// Matches any ``Kind/invalidTokenResponse``.
    public static let invalidTokenResponse = kind(.invalidTokenResponse)
    /// Matches any ``Kind/excessiveRefresh``.
    public static let excessiveRefresh = kind(.excessiveRefresh)
    /// Matches any ``Kind/authorizationDenied``.
    public static let authorizationDenied = kind(.authorizationDenied)
    /// Matches any ``Kind/invalidAuthorizationResponse``.
    public static let invalidAuthorizationResponse = kind(.invalidAuthorizationResponse)
    /// Matches any ``Kind/challengeFailed``.
    public static let challengeFailed = kind(.challengeFailed)
    /// Matches any ``Kind/revocationFailed``.
    public static let revocationFailed = kind(.revocationFailed)
    /// Matches any ``Kind/tokenStoreFailed``.
    public static let tokenStoreFailed = kind(.tokenStoreFailed)
    /// Matches any ``Kind/missingConfiguration``.
    public static let missingConfiguration = kind(.missingConfiguration)

    /// A copy that records the kind of resource request and, when unset, the level.
    ///
    /// - Parameter requestKind: The kind of request that failed.
    /// - Returns: The error with ``requestKind`` set.
    public func with(requestKind: RequestKind) -> AuthError {
        var copy = self
        copy.requestKind = requestKind
        if copy.level == nil { copy.level = requestKind.level }
        return copy
    }

    /// The analytics hash of kind, status and endpoint: 16 hex digits of FNV-1a 64 over
    /// `"auth.<kind>|<status or 0>|<endpoint or ->"`, the same in every process and version.
    public var stableHash: String {
        StableHash.hex("auth.\(kind.rawValue)|\(statusCode ?? 0)|\(endpoint ?? "-")")
    }

    /// The error as flat strings for logging and analytics: `reason`, `request_kind`,
    /// `level`, `oauth_error`, `code`, `endpoint`, `hash`, each when known. Never holds a
    /// token, a secret or an `error_description`.
    public var parameters: [String: String] {
        var parameters = ["reason": kind.rawValue, "hash": stableHash]
        if let requestKind { parameters["request_kind"] = requestKind.rawValue }
        if let level { parameters["level"] = level.rawValue }
        if let oauthError { parameters["oauth_error"] = oauthError.code.rawValue }
        if let statusCode { parameters["code"] = String(statusCode) }
        if let endpoint { parameters["endpoint"] = endpoint }
        return parameters
    }

    /// Errors are equal when their kinds are.
    public static func == (lhs: AuthError, rhs: AuthError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The kind, the context and the message.
    public var description: String {
        var text = "AuthError.\(kind.rawValue)"
        var context: [String] = []
        if let requestKind { context.append("\(requestKind) request") }
        if let level { context.append("level \(level)") }
        if let statusCode { context.append("status \(statusCode)") }
        if let endpoint { context.append(endpoint) }
        if !context.isEmpty { text += " (\(context.joined(separator: ", ")))" }
        if !message.isEmpty { text += ": \(message)" }
        if let oauthError { text += " [\(oauthError)]" }
        if let underlying { text += " — \(underlying)" }
        return text
    }
}
