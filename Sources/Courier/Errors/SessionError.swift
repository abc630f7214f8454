/// A request was refused before it reached the transport, or the session cannot run it.
///
/// Nothing was sent when a ``SessionError`` is thrown.
public struct SessionError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of session failure.
    public enum Kind: String, Sendable, Hashable {
        /// The URL is missing, relative without a base URL, or not HTTP(S).
        case invalidURL
        /// A header that the SDK owns was set by the caller, or a header is malformed.
        case invalidHeader
        /// The request body cannot be read or is not allowed.
        case invalidBody
        /// The session was shut down.
        case shutDown
    }

    /// The kind of failure.
    public let kind: Kind
    /// What was wrong, for people.
    public let message: String

    /// Creates an error.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// The URL is missing, relative without a base URL, or not HTTP(S).
    public static func invalidURL(_ message: String) -> SessionError { SessionError(kind: .invalidURL, message: message) }
    /// A header is owned by the SDK or malformed.
    public static func invalidHeader(_ message: String) -> SessionError { SessionError(kind: .invalidHeader, message: message) }
    /// The body cannot be read or is not allowed.
    public static func invalidBody(_ message: String) -> SessionError { SessionError(kind: .invalidBody, message: message) }
    /// The session was shut down.
    public static let shutDown = SessionError(kind: .shutDown, message: "the session was shut down")

    /// Errors are equal when their kinds are.
    public static func == (lhs: SessionError, rhs: SessionError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The kind and the message.
    public var description: String { "SessionError.\(kind.rawValue): \(message)" }
}
