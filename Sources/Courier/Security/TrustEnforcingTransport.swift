/// A transport that enforces a ``SecurityConfiguration`` on every connection it makes.
///
/// A secured ``Session`` sends only through a transport that says it enforces the
/// session's configuration; otherwise every request fails with
/// ``SecurityError/Kind/trustNotEnforced``. This keeps a secured session from being
/// handed a transport that would connect unpinned.
///
/// ### Implement TrustEnforcingTransport
///
/// ``CurlTransport`` enforces the configuration in its ``CurlTransport/Configuration/security``.
/// A transport that opens no connection at all, such as a test double, may return `true`:
///
/// ```swift
/// extension StubTransport: TrustEnforcingTransport {
///     func enforces(_ security: SecurityConfiguration) -> Bool { true }  // never connects
/// }
/// ```
public protocol TrustEnforcingTransport: Transport {
    /// Whether every connection this transport makes is checked against `security`'s
    /// trust policies and TLS minimum.
    ///
    /// - Parameter security: The session's security configuration.
    /// - Returns: `true` only when the transport enforces it.
    func enforces(_ security: SecurityConfiguration) -> Bool
}
