import Foundation

/// `application/x-www-form-urlencoded` as OAuth 2.0 uses it (RFC 6749 Appendix B): each
/// name and value UTF-8 encoded, unreserved characters kept, space as `+`, every other byte
/// as `%XX`.
enum OAuth2Form {
    private static let unreserved: Set<UInt8> = Set(
        Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8)
    )

    /// One name or value, encoded.
    static func encode(_ text: String) -> String {
        var out = [UInt8]()
        out.reserveCapacity(text.utf8.count)
        let hex = Array("0123456789ABCDEF".utf8)
        for byte in text.utf8 {
            if unreserved.contains(byte) {
                out.append(byte)
            } else if byte == 0x20 {
                out.append(UInt8(ascii: "+"))
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hex[Int(byte >> 4)])
                out.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// The pairs as a form body, in the given order.
    static func encode(_ pairs: [(name: String, value: String)]) -> Data {
        Data(pairs.map { "\(encode($0.name))=\(encode($0.value))" }.joined(separator: "&").utf8)
    }

    /// The value of `Authorization: Basic` for client credentials: the id and the secret are
    /// form-encoded first, then joined with `:` and base64-encoded (RFC 6749 §2.3.1).
    static func basicCredentials(clientID: String, clientSecret: String) -> String {
        "Basic " + Data("\(encode(clientID)):\(encode(clientSecret))".utf8).base64EncodedString()
    }

    /// URL-safe base64 without padding (RFC 7636 Appendix A).
    static func base64URL(_ data: some Sequence<UInt8>) -> String {
        Data(data).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// `count` bytes from the system's cryptographically secure generator.
    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
