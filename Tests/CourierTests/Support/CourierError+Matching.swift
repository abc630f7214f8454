@testable import Courier

extension CourierError {
    /// An error that equals every error of `kind`, for `#expect(throws:)`.
    static func kind(_ kind: Kind) -> CourierError { CourierError(kind, message: "") }
}
