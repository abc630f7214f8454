/// The counter of TLS connections whose verified chain matched none of their policy's pins.
enum PinMismatchMetrics {
    /// `courier.tls.pin.mismatches`, with dimensions `host` (the connection's host) and
    /// `mode` (`enforce`: refused; `audit`: let through and reported).
    static let label = "courier.tls.pin.mismatches"
}
