/// A request was refused, or a connection failed, because of the session's security
/// configuration: an untrusted host, a pin mismatch, a debugger, a configuration that
/// cannot be enforced.
///
/// Nothing of the HTTP request was sent when a ``SecurityError`` is thrown: the checks run
/// before the request reaches the transport, and a pin mismatch aborts the TLS handshake.
///
/// Compare errors by kind with `==` (`error == .pinMismatch`); ``host`` and
/// ``expectedPins`` say which host failed and what it had to match. No field ever holds a
/// token, a password or a private key.
///
/// ### Why a separate error type
///
/// ``SessionError`` says a request is malformed and ``TransportError`` says the network
/// failed; a ``SecurityError`` says the SDK refused on purpose. Callers treat it
/// differently: it is never retried, and it usually means a configuration or an
/// environment to fix, not a server to wait for.
public struct SecurityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of security failure.
    public enum Kind: String, Sendable, Hashable {
        /// The host has no ``TrustPolicy`` in the session's secured configuration, so no
        /// request (and no credential) may go to it.
        case untrustedHost
        /// A secured request was not HTTPS.
        case insecureScheme
        /// No certificate of the server's verified chain matched the host's pins.
        case pinMismatch
        /// A debugger or tracer is attached to the process and debugger detection is on.
        case debuggerAttached
        /// The session is secured, but its transport cannot show that it enforces the
        /// session's trust policies on every connection.
        case trustNotEnforced
        /// libcurl's TLS backend is not the OpenSSL that Courier's verify hook needs.
        case unsupportedTLSBackend
        /// The security configuration is invalid: a malformed pin or host pattern, an
        /// unreadable certificate, a wrong key password.
        case invalidConfiguration
        /// A server answered 307 or 308 to a request with a body and pointed to another
        /// origin: following would send the body there. The redirect was not followed.
        case crossOriginRedirect
    }

    /// The kind of failure.
    public let kind: Kind
    /// What went wrong and what to do about it, for people.
    public let message: String
    /// The host concerned, when there is one.
    public let host: String?
    /// The pins the host had to match (for ``Kind/pinMismatch``).
    public let expectedPins: [SPKIPin]

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: The kind of failure.
    ///   - message: The explanation.
    ///   - host: The host concerned.
    ///   - expectedPins: The pins the host had to match.
    public init(kind: Kind, message: String, host: String? = nil, expectedPins: [SPKIPin] = []) {
        self.kind = kind
        self.message = message
        self.host = host
        self.expectedPins = expectedPins
    }

    /// A value that matches every error of `kind`, for `==` comparisons.
    public static func kind(_ kind: Kind) -> SecurityError { SecurityError(kind: kind, message: "") }

    /// Matches any untrusted-host refusal.
    public static let untrustedHost = kind(.untrustedHost)
    /// Matches any refusal of a non-HTTPS secured request.
    public static let insecureScheme = kind(.insecureScheme)
    /// Matches any pin mismatch.
    public static let pinMismatch = kind(.pinMismatch)
    /// Matches any refusal because of an attached debugger.
    public static let debuggerAttached = kind(.debuggerAttached)
    /// Matches any refusal because the transport does not enforce the trust policies.
    public static let trustNotEnforced = kind(.trustNotEnforced)
    /// Matches an unsupported TLS backend.
    public static let unsupportedTLSBackend = kind(.unsupportedTLSBackend)
    /// Matches any invalid security configuration.
    public static let invalidConfiguration = kind(.invalidConfiguration)
    /// Matches any refused cross-origin redirect of a request body.
    public static let crossOriginRedirect = kind(.crossOriginRedirect)

    /// Errors are equal when their kinds are.
    public static func == (lhs: SecurityError, rhs: SecurityError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The kind and the message.
    public var description: String { "SecurityError.\(kind.rawValue): \(message)" }
}

extension SecurityError {
    static func untrustedHost(_ host: String) -> SecurityError {
        SecurityError(
            kind: .untrustedHost,
            message: "\(host) is not in the trust set of this secured session: add a TrustPolicy with its pins "
                + "or pinned CA bundle; nothing was sent",
            host: host
        )
    }

    static func pinMismatch(host: String, expected: [SPKIPin], pinnedCertificateAuthorities: String?) -> SecurityError {
        let pins = expected.map(\.description).joined(separator: ", ")
        let anchors = pinnedCertificateAuthorities.map { " and the pinned CA bundle \($0)" } ?? ""
        return SecurityError(
            kind: .pinMismatch,
            message: "no certificate in the verified chain of \(host) matches its pins (expected one of: \(pins))"
                + "\(anchors); the TLS handshake was aborted and nothing was sent",
            host: host,
            expectedPins: expected
        )
    }

    static func crossOriginRedirect(status: Int, toHost host: String) -> SecurityError {
        SecurityError(
            kind: .crossOriginRedirect,
            message: "the server answered \(status) and pointed the request, body included, to another origin (\(host)); "
                + "a secured session does not send a request body across origins: the redirect was not followed",
            host: host
        )
    }

    static func invalidConfiguration(_ message: String, host: String? = nil) -> SecurityError {
        SecurityError(kind: .invalidConfiguration, message: message, host: host)
    }
}
