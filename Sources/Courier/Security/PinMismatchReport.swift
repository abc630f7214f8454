/// A TLS connection whose verified chain matched none of its policy's pins.
///
/// Given to the handler of
/// ``SecurityConfiguration/secured(trust:minimumTLSVersion:detectsDebugger:reportingPinMismatches:)``
/// once per new connection (a connection that resumes an earlier TLS session is not checked
/// again, so it is not reported again). Under ``TrustPolicy/PinMode/audit`` the connection
/// went ahead; under ``TrustPolicy/PinMode/enforce`` it was refused and its request failed
/// with ``CourierError/Kind/pinMismatch``.
///
/// A report holds public keys' digests only, never a credential.
public struct PinMismatchReport: Sendable, Hashable, CustomStringConvertible {
    /// The host the connection went to.
    public let host: String
    /// The port the connection went to.
    public let port: Int
    /// The SPKI pins of the verified chain, leaf first.
    public let chainPins: [SPKIPin]
    /// The pins the policy expected, one of which no certificate of the chain matched.
    public let expectedPins: [SPKIPin]
    /// The policy's mode: whether the connection went ahead (``TrustPolicy/PinMode/audit``)
    /// or was refused (``TrustPolicy/PinMode/enforce``).
    public let mode: TrustPolicy.PinMode

    /// Host, port, mode and the pins.
    public var description: String {
        "PinMismatchReport(\(host):\(port), \(mode), chain: [\(chainPins.map(\.description).joined(separator: ", "))], "
            + "expected: [\(expectedPins.map(\.description).joined(separator: ", "))])"
    }
}
