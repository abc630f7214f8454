/// A ``ResourceRequest`` could not be turned into an HTTP request; nothing was sent.
///
/// Every check on a resource request runs in ``ResourceRequest/makeHTTPRequest()``, before
/// the session sees the request, so bad input never produces a half-sent request. Compare
/// errors by kind: `error == .invalidPath` matches every invalid path whatever its message.
///
/// ```swift
/// do {
///     _ = try await session.send(ResourceRequest(path: "/items", parameters: ["ratio": .double(.nan)]))
/// } catch let error as RequestError where error == .invalidParameter {
///     print(error.message)  // parameter `ratio` is NaN, which neither JSON nor a query string can carry
/// }
/// ```
public struct RequestError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of bad input.
    public enum Kind: String, Sendable, Hashable {
        /// The path is empty, has a character that must be percent-encoded, a fragment,
        /// credentials, or a scheme other than HTTP(S).
        case invalidPath
        /// A header name is not an RFC 9110 token, a value holds CR, LF, NUL or another
        /// control character, or a name appears twice.
        case invalidHeader
        /// A header that Courier sets itself (User-Agent, Authorization, Host,
        /// Content-Length, Transfer-Encoding, or Content-Type on a multipart request).
        case reservedHeader
        /// A parameter cannot be encoded: NaN or infinity, an empty name, or a nested
        /// value where the query-string format allows only scalars.
        case invalidParameter
        /// The method cannot carry a body (GET and HEAD; DELETE for multipart).
        case bodyNotAllowed
        /// Both a raw body and multipart data were given.
        case conflictingBody
        /// A file to upload does not exist, is not a regular file, or changed size.
        case unreadableFile
        /// An `Encodable` body could not be encoded as JSON or XML.
        case encodingFailed
    }

    /// The kind of bad input.
    public let kind: Kind
    /// What was wrong, for people.
    public let message: String

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: The kind of bad input.
    ///   - message: What was wrong.
    public init(kind: Kind, message: String) {
        self.kind = kind
        self.message = message
    }

    /// A value that matches every error of `kind`, for `==` comparisons.
    ///
    /// - Parameter kind: The kind to match.
    /// - Returns: An error with that kind and no message.
    public static func kind(_ kind: Kind) -> RequestError { RequestError(kind: kind, message: "") }

    /// Matches any invalid path.
    public static let invalidPath = kind(.invalidPath)
    /// Matches any malformed header.
    public static let invalidHeader = kind(.invalidHeader)
    /// Matches any header that Courier owns.
    public static let reservedHeader = kind(.reservedHeader)
    /// Matches any parameter that cannot be encoded.
    public static let invalidParameter = kind(.invalidParameter)
    /// Matches a body on a method that cannot carry one.
    public static let bodyNotAllowed = kind(.bodyNotAllowed)
    /// Matches a raw body given together with multipart data.
    public static let conflictingBody = kind(.conflictingBody)
    /// Matches a file that cannot be uploaded.
    public static let unreadableFile = kind(.unreadableFile)
    /// Matches an `Encodable` body that failed to encode.
    public static let encodingFailed = kind(.encodingFailed)

    /// Errors are equal when their kinds are.
    public static func == (lhs: RequestError, rhs: RequestError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The kind and the message.
    public var description: String { "RequestError.\(kind.rawValue): \(message)" }
}
