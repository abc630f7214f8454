import HTTPTypes

/// An HTTP-level failure of a resource request: a status the caller did not accept, or a
/// body that did not decode.
///
/// Courier throws it only when asked: ``ResourceResponse/validate(acceptableStatusCodes:)``
/// turns an unaccepted status into an error, and ``ResourceResponse/decode(_:decoder:)``
/// throws it when the body does not decode. ``Session/send(_:logger:)`` itself returns every
/// response, whatever its status.
///
/// Each error carries the status code, the endpoint (method and path, never the query), a
/// stable hash for analytics, and a flat ``parameters`` view for logging:
///
/// ```swift
/// do {
///     let user = try await session.send(request).validate().decode(User.self)
/// } catch let error as ResourceError {
///     analytics.record("resource_error", error.parameters)
///     // ["reason": "client", "code": "404", "endpoint": "GET /api/users/42", "hash": "…"]
/// }
/// ```
///
/// ### The stable hash
///
/// ``stableHash`` is FNV-1a 64 over the UTF-8 bytes of
/// `"<reason>|<code>|<METHOD> <path>"` (for example `"client|404|GET /api/users/42"`),
/// written as 16 lower-case hex digits. The same kind, code and endpoint give the same hash
/// in every process and every version of Courier; the reasons `client`, `server`,
/// `unexpected` and `decoding` are part of that contract and never change. A path with
/// identifiers (`/users/42`) hashes per identifier: use a template path for grouping.
///
/// Errors compare equal when their kinds are equal: `error == .clientError` matches every 4xx.
public struct ResourceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of HTTP-level failure.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// A 4xx status.
        case clientError = "client"
        /// A 5xx status.
        case serverError = "server"
        /// Any other status outside the accepted range (1xx, 3xx, or a 2xx not accepted).
        case unexpectedStatus = "unexpected"
        /// The body did not decode as the requested type.
        case undecodableBody = "decoding"
    }

    /// The kind of failure.
    public let kind: Kind
    /// The response's status code.
    public let statusCode: Int
    /// The request's method and path, without query.
    public let endpoint: ResourceEndpoint
    /// What went wrong, for people (for a decoding failure, the decoder's explanation).
    public let message: String
    /// The response, for its headers and body (a problem-details document, say).
    public let response: ResourceResponse?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: The kind of failure.
    ///   - statusCode: The status code.
    ///   - endpoint: The endpoint.
    ///   - message: What went wrong.
    ///   - response: The response, when there is one.
    public init(
        kind: Kind,
        statusCode: Int,
        endpoint: ResourceEndpoint,
        message: String = "",
        response: ResourceResponse? = nil
    ) {
        self.kind = kind
        self.statusCode = statusCode
        self.endpoint = endpoint
        self.message = message
        self.response = response
    }

    /// The error for a status that was not accepted: ``Kind/clientError`` for 4xx,
    /// ``Kind/serverError`` for 5xx, ``Kind/unexpectedStatus`` otherwise.
    ///
    /// - Parameter response: The response.
    /// - Returns: The error.
    public static func status(of response: ResourceResponse) -> ResourceError {
        let kind: Kind =
            switch response.statusCode {
            case 400...499: .clientError
            case 500...599: .serverError
            default: .unexpectedStatus
            }
        return ResourceError(
            kind: kind,
            statusCode: response.statusCode,
            endpoint: response.endpoint,
            message: "\(response.endpoint) answered \(response.statusCode) \(response.status.reasonPhrase)",
            response: response
        )
    }

    /// A value that matches every error of `kind`, for `==` comparisons.
    ///
    /// - Parameter kind: The kind to match.
    /// - Returns: An error with that kind.
    public static func kind(_ kind: Kind) -> ResourceError {
        ResourceError(kind: kind, statusCode: 0, endpoint: ResourceEndpoint(method: .get, path: "/"))
    }

    /// Matches any 4xx error.
    public static let clientError = kind(.clientError)
    /// Matches any 5xx error.
    public static let serverError = kind(.serverError)
    /// Matches any other unaccepted status.
    public static let unexpectedStatus = kind(.unexpectedStatus)
    /// Matches any decoding failure.
    public static let undecodableBody = kind(.undecodableBody)

    /// The analytics hash of kind, code and endpoint: 16 hex digits, stable across
    /// processes and versions (see "The stable hash").
    public var stableHash: String {
        StableHash.hex("\(kind.rawValue)|\(statusCode)|\(endpoint)")
    }

    /// The error as flat strings for logging and analytics: `reason`, `code`, `endpoint`
    /// and `hash`. Never holds a query, a header or a body.
    public var parameters: [String: String] {
        ["reason": kind.rawValue, "code": String(statusCode), "endpoint": endpoint.description, "hash": stableHash]
    }

    /// Errors are equal when their kinds are.
    public static func == (lhs: ResourceError, rhs: ResourceError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The kind, code, endpoint and message.
    public var description: String {
        "ResourceError.\(kind.rawValue) \(statusCode) \(endpoint) [\(stableHash)]"
            + (message.isEmpty ? "" : ": \(message)")
    }
}
