public import Foundation

extension OAuth2Error {
    /// An error code from an OAuth 2.0 error response, such as `invalid_grant`.
    ///
    /// The set is open: servers and extensions define their own codes, so a code is a
    /// `RawRepresentable` string with the registered values as constants.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code as the server sent it.
        public let rawValue: String

        /// Creates a code.
        ///
        /// - Parameter rawValue: The code, such as `"invalid_grant"`.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// RFC 6749 §5.2: a parameter is missing, repeated or malformed.
        public static let invalidRequest = Code(rawValue: "invalid_request")
        /// RFC 6749 §5.2: the client could not be authenticated.
        public static let invalidClient = Code(rawValue: "invalid_client")
        /// RFC 6749 §5.2: the grant (code, refresh token, resource owner credentials) is invalid,
        /// expired, revoked, or was issued to another client.
        public static let invalidGrant = Code(rawValue: "invalid_grant")
        /// RFC 6749 §5.2: the client may not use this grant type.
        public static let unauthorizedClient = Code(rawValue: "unauthorized_client")
        /// RFC 6749 §5.2: the server does not support this grant type.
        public static let unsupportedGrantType = Code(rawValue: "unsupported_grant_type")
        /// RFC 6749 §5.2: the requested scope is invalid, unknown or exceeds what was granted.
        public static let invalidScope = Code(rawValue: "invalid_scope")
        /// RFC 6749 §4.1.2.1: the resource owner or the server denied the request.
        public static let accessDenied = Code(rawValue: "access_denied")
        /// RFC 6749 §4.1.2.1: the server does not support this response type.
        public static let unsupportedResponseType = Code(rawValue: "unsupported_response_type")
        /// RFC 6749 §4.1.2.1: the server failed unexpectedly.
        public static let serverError = Code(rawValue: "server_error")
        /// RFC 6749 §4.1.2.1: the server is overloaded or under maintenance.
        public static let temporarilyUnavailable = Code(rawValue: "temporarily_unavailable")
        /// RFC 8693 §2.2.2: the audience or resource is unknown or not allowed.
        public static let invalidTarget = Code(rawValue: "invalid_target")
        /// RFC 7009 §2.2.1: the server cannot revoke this type of token.
        public static let unsupportedTokenType = Code(rawValue: "unsupported_token_type")
        /// RFC 6750 §3.1: the access token is expired, revoked, malformed or invalid.
        public static let invalidToken = Code(rawValue: "invalid_token")
        /// RFC 6750 §3.1: the access token lacks a scope the resource needs.
        public static let insufficientScope = Code(rawValue: "insufficient_scope")
        /// RFC 9449 §7.1: the DPoP proof is missing, malformed or does not match the request.
        public static let invalidDPoPProof = Code(rawValue: "invalid_dpop_proof")
        /// RFC 9449 §8, §9: the server wants a proof with the nonce in its `DPoP-Nonce` field.
        public static let useDPoPNonce = Code(rawValue: "use_dpop_nonce")

        /// The code.
        public var description: String { rawValue }
    }
}

/// An OAuth 2.0 error response (RFC 6749 §5.2 and §4.1.2.1): the `error` code with the
/// optional `error_description` and `error_uri`.
///
/// Courier reads it from a token, revocation or authorization error, and keeps it in
/// ``CourierError/oauthError``.
public struct OAuth2Error: Sendable, Hashable, CustomStringConvertible {
    /// The `error` field.
    public let code: OAuth2Error.Code
    /// The `error_description` field: text for developers, not for end users.
    public let errorDescription: String?
    /// The `error_uri` field: a page about the error.
    public let errorURI: URL?

    /// Creates an error response.
    ///
    /// - Parameters:
    ///   - code: The `error` code.
    ///   - errorDescription: The `error_description`.
    ///   - errorURI: The `error_uri`.
    public init(code: OAuth2Error.Code, errorDescription: String? = nil, errorURI: URL? = nil) {
        self.code = code
        self.errorDescription = errorDescription
        self.errorURI = errorURI
    }

    /// Reads an error response from a JSON body, or `nil` when the body is not a JSON object
    /// with a string `error` member.
    ///
    /// Non-string `error_description` or `error_uri` members are ignored rather than
    /// failing the parse: what matters to a client is the code.
    ///
    /// - Parameter data: The response body.
    public init?(json data: Data) {
        guard let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            let code = object["error"] as? String, !code.isEmpty
        else { return nil }
        self.init(fields: object.compactMapValues { $0 as? String }, code: code)
    }

    /// Reads an error from the query of an authorization redirect, or `nil` when the query has
    /// no `error` parameter.
    ///
    /// - Parameter items: The redirect URL's query items.
    public init?(queryItems items: [URLQueryItem]) {
        var fields: [String: String] = [:]
        for item in items where fields[item.name] == nil { fields[item.name] = item.value ?? "" }
        guard let code = fields["error"], !code.isEmpty else { return nil }
        self.init(fields: fields, code: code)
    }

    private init(fields: [String: String], code: String) {
        self.code = OAuth2Error.Code(rawValue: code)
        self.errorDescription = fields["error_description"].flatMap { $0.isEmpty ? nil : $0 }
        self.errorURI = fields["error_uri"].flatMap(URL.init(string:))
    }

    /// `code: description (uri)`.
    public var description: String {
        var text = code.rawValue
        if let errorDescription { text += ": \(errorDescription)" }
        if let errorURI { text += " (\(errorURI.absoluteString))" }
        return text
    }
}
