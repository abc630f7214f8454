import Crypto
import Foundation

extension Data {
    /// The SHA-256 of the bytes, as lowercase hex.
    var sha256Hex: String {
        SHA256.hash(data: self).hex
    }
}

extension SHA256.Digest {
    /// The digest as lowercase hex.
    var hex: String { map { String(format: "%02x", $0) }.joined() }
}
