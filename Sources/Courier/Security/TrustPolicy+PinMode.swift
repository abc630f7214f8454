extension TrustPolicy {
    /// What a TLS connection does when its verified chain matches none of a policy's pins.
    ///
    /// Either way the chain must verify — against the policy's pinned CA bundle, or the
    /// system's store (or the transport's bundle) — and the certificate must be for the host:
    /// no mode skips chain or host name verification. A mode only decides what a chain that
    /// passed them and matches no pin does.
    public struct PinMode: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The mode's name: `enforce` or `audit`.
        public let rawValue: String

        /// Creates a mode from its name.
        ///
        /// - Parameter rawValue: The name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// The connection is refused with ``CourierError/Kind/pinMismatch`` before anything is
        /// sent. The default.
        public static let enforce = PinMode(rawValue: "enforce")
        /// The connection proceeds, and the mismatch is reported: to the handler of
        /// ``SecurityConfiguration/secured(trust:minimumTLSVersion:detectsDebugger:reportingPinMismatches:)``
        /// and to the `courier.tls.pin.mismatches` counter. For rolling out pins: learn which
        /// servers a new pin set would refuse before it refuses anything.
        public static let audit = PinMode(rawValue: "audit")

        /// The mode's name.
        public var description: String { rawValue }
    }
}
