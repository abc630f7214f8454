public import Foundation

/// What a token exchange asks for: scope, audience and resource (RFC 8693 §2.1).
///
/// ``UserClient/sendExchangedRequest(_:exchange:logger:)`` keeps one broker per distinct
/// exchange, so repeated calls reuse the exchanged token until it expires.
public struct TokenExchangeRequest: Sendable, Hashable {
    /// The scope to ask for; `nil` lets the server choose.
    public var scope: Set<Scope>?
    /// The `audience` values.
    public var audience: [String]
    /// The `resource` URIs.
    public var resource: [URL]

    /// Creates an exchange request.
    ///
    /// - Parameters:
    ///   - scope: The scope.
    ///   - audience: The audience values.
    ///   - resource: The resource URIs.
    public init(scope: Set<Scope>? = nil, audience: [String] = [], resource: [URL] = []) {
        self.scope = scope
        self.audience = audience
        self.resource = resource
    }

    /// The authorization level of the exchanged token: `exchange:` and a stable hash of the
    /// request, so each distinct exchange has its own broker and store entry.
    var level: AuthorizationLevel {
        let scopeText = scope.map { Scope.parameterValue(of: $0) } ?? "-"
        let key =
            "\(scopeText)|\(audience.joined(separator: ","))|\(resource.map(\.absoluteString).joined(separator: ","))"
        return AuthorizationLevel(rawValue: "exchange:\(StableHash.hex(key))")
    }
}
