/// An OAuth 2.0 scope value (RFC 6749 §3.3), such as `read`.
///
/// Scopes are an open set, so a scope is a `RawRepresentable` string. A set of scopes is
/// sent as one space-separated parameter; ``parameterValue(of:)`` writes it in a stable
/// order and ``set(parsing:)`` reads it back.
public struct Scope: RawRepresentable, Hashable, Sendable, Comparable, Codable, ExpressibleByStringLiteral,
    CustomStringConvertible
{
    /// The scope token.
    public let rawValue: String

    /// Creates a scope.
    ///
    /// - Parameter rawValue: The scope token. RFC 6749 allows printable ASCII except space,
    ///   `"` and `\`; Courier does not check, the server does.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// Creates a scope from a string literal.
    public init(stringLiteral value: String) { self.rawValue = value }

    /// Orders by token, so that scope lists are written the same way every time.
    public static func < (lhs: Scope, rhs: Scope) -> Bool { lhs.rawValue < rhs.rawValue }

    /// The token.
    public var description: String { rawValue }

    /// Read access.
    public static let read: Scope = "read"
    /// Write access.
    public static let write: Scope = "write"
    /// The user's profile.
    public static let profile: Scope = "profile"
    /// OpenID Connect.
    public static let openID: Scope = "openid"

    /// The `scope` parameter for a set of scopes: the tokens sorted and joined with spaces.
    ///
    /// - Parameter scopes: The scopes.
    /// - Returns: The parameter value; empty for an empty set.
    public static func parameterValue(of scopes: Set<Scope>) -> String {
        scopes.sorted().map(\.rawValue).joined(separator: " ")
    }

    /// The scopes of a space-separated `scope` parameter.
    ///
    /// - Parameter value: The parameter value; runs of spaces are allowed.
    /// - Returns: The scopes.
    public static func set(parsing value: String) -> Set<Scope> {
        Set(value.split(whereSeparator: { $0 == " " || $0 == "\t" }).map { Scope(rawValue: String($0)) })
    }
}
