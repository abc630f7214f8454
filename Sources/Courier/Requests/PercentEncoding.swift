/// RFC 3986 percent-encoding for query strings and form bodies.
enum PercentEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    /// Whether `byte` is an RFC 3986 unreserved character: `A–Z a–z 0–9 - . _ ~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
            UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }

    /// Appends `text` to `output`, every byte but the unreserved ones as `%XX`.
    ///
    /// - Parameters:
    ///   - text: The text to encode.
    ///   - format: Whether spaces become `+` and plus signs stay `+`.
    ///   - output: Where the encoded bytes go.
    static func encode(_ text: String, format: ResourceRequest.QueryStringFormat, into output: inout [UInt8]) {
        for byte in text.utf8 {
            if isUnreserved(byte) {
                output.append(byte)
            } else if byte == UInt8(ascii: " ") && format.spaceEncoding == .plus {
                output.append(UInt8(ascii: "+"))
            } else if byte == UInt8(ascii: "+") && format.plusEncoding == .literal {
                output.append(byte)
            } else {
                output.append(UInt8(ascii: "%"))
                output.append(hexDigits[Int(byte >> 4)])
                output.append(hexDigits[Int(byte & 0x0F)])
            }
        }
    }
}
