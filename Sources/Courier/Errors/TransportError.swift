/// A transfer failed below HTTP: name resolution, connection, TLS, timeout, a connection
/// closed mid-body, too many redirects, a body too large to buffer.
///
/// Compare errors by kind with `==` (`error == .timedOut`); the curl code and message are
/// kept for diagnostics.
public struct TransportError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of transport failure.
    public enum Kind: String, Sendable, Hashable {
        /// The host name could not be resolved.
        case couldNotResolveHost
        /// No connection could be established.
        case couldNotConnect
        /// A connect or total timeout expired.
        case timedOut
        /// TLS failed: handshake, certificate verification or pinning.
        case tlsFailure
        /// The connection closed before the response was complete.
        case connectionClosed
        /// More redirects than allowed.
        case tooManyRedirects
        /// A redirect from HTTPS to plain HTTP was refused.
        case insecureRedirect
        /// The proxy refused to open a tunnel (for example 407, authentication required).
        case proxyFailure
        /// The response body exceeded the buffering limit.
        case responseTooLarge
        /// The request body could not be read or sent.
        case requestBodyFailed
        /// The transport was shut down.
        case shutDown
        /// The request could not be handed to the transport (bad URL, bad option).
        case invalidRequest
        /// Any other failure; see ``curlCode`` and ``message``.
        case other
    }

    /// The kind of failure.
    public let kind: Kind
    /// libcurl's `CURLcode`, when libcurl reported the failure.
    public let curlCode: Int?
    /// A human-readable explanation, with libcurl's own error text when there was one.
    public let message: String

    /// Creates an error.
    public init(kind: Kind, curlCode: Int? = nil, message: String) {
        self.kind = kind
        self.curlCode = curlCode
        self.message = message
    }

    /// A value that matches every error of `kind`, for `==` comparisons.
    public static func kind(_ kind: Kind) -> TransportError { TransportError(kind: kind, message: "") }

    /// Matches any timeout.
    public static let timedOut = kind(.timedOut)
    /// Matches any connection closed mid-response.
    public static let connectionClosed = kind(.connectionClosed)
    /// Matches any TLS failure.
    public static let tlsFailure = kind(.tlsFailure)
    /// Matches any connect failure.
    public static let couldNotConnect = kind(.couldNotConnect)
    /// Matches any resolution failure.
    public static let couldNotResolveHost = kind(.couldNotResolveHost)
    /// Matches too many redirects.
    public static let tooManyRedirects = kind(.tooManyRedirects)
    /// Matches a refused HTTPS-to-HTTP redirect.
    public static let insecureRedirect = kind(.insecureRedirect)
    /// Matches a proxy that refused the tunnel.
    public static let proxyFailure = kind(.proxyFailure)
    /// Matches a body over the buffering limit.
    public static let responseTooLarge = kind(.responseTooLarge)
    /// Matches a failed request body.
    public static let requestBodyFailed = kind(.requestBodyFailed)
    /// Matches a shut-down transport.
    public static let shutDown = kind(.shutDown)

    /// Errors are equal when their kinds are.
    public static func == (lhs: TransportError, rhs: TransportError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The kind, the message and the curl code.
    public var description: String {
        var text = "TransportError.\(kind.rawValue): \(message)"
        if let curlCode { text += " (curl code \(curlCode))" }
        return text
    }
}
