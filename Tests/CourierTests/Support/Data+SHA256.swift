import Crypto
import Foundation

extension Data {
    /// The SHA-256 of the bytes, as lowercase hex.
    var sha256Hex: String {
        SHA256.hash(data: self).map { String(format: "%02x", $0) }.joined()
    }
}
