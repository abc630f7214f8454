import Foundation

/// Base64url without padding (RFC 7515 §2, RFC 4648 §5).
enum Base64URL {
    /// Encodes bytes, in one pass over the base64 text (every DPoP proof encodes three parts).
    static func encode(_ data: Data) -> String {
        let base64 = data.base64EncodedData()
        var length = base64.count
        while length > 0, base64[base64.startIndex + length - 1] == UInt8(ascii: "=") { length -= 1 }
        return String(unsafeUninitializedCapacity: length) { buffer in
            for (index, byte) in base64.prefix(length).enumerated() {
                buffer[index] =
                    switch byte {
                    case UInt8(ascii: "+"): UInt8(ascii: "-")
                    case UInt8(ascii: "/"): UInt8(ascii: "_")
                    default: byte
                    }
            }
            return length
        }
    }

    /// Decodes text; `nil` when it is not base64url.
    static func decode(_ text: String) -> Data? {
        var base64 = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !base64.contains("=") else { return nil }
        base64 += String(repeating: "=", count: (4 - base64.count % 4) % 4)
        return Data(base64Encoded: base64)
    }
}
