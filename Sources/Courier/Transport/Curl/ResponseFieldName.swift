import HTTPTypes

/// Turns the name bytes of a response header line into an `HTTPField.Name`.
///
/// Nearly every response carries the same dozen names; for those, a byte comparison
/// (ASCII case-insensitive) returns the predefined name (its usual spelling, e.g.
/// `Content-Type`, as `rawName`) without building a `String`,
/// validating it and lowercasing it. Every other name takes the checked path of
/// `HTTPField.Name(_:)`, which refuses names that are not tokens.
enum ResponseFieldName {
    /// The name for `bytes`, or `nil` when they are not a valid field name.
    static func name(_ bytes: UnsafeRawBufferPointer) -> HTTPField.Name? {
        if bytes.count < common.count, let candidates = common[bytes.count] {
            for candidate in candidates where matches(bytes, lowercase: candidate.bytes) {
                return candidate.name
            }
        }
        return HTTPField.Name(String(decoding: bytes, as: UTF8.self))
    }

    private struct Known {
        var bytes: [UInt8]
        var name: HTTPField.Name
    }

    /// The common names by length (index = byte count).
    private static let common: [[Known]?] = {
        let names: [HTTPField.Name] = [
            .contentLength, .contentType, .date, .server, .connection, .lastModified, .eTag,
            .acceptRanges, .cacheControl, .contentEncoding, .transferEncoding, .location, .vary,
            .setCookie, .expires, .age, .wwwAuthenticate, .strictTransportSecurity,
            HTTPField.Name("keep-alive")!, HTTPField.Name("x-content-type-options")!,
        ]
        var table = [[Known]?](repeating: nil, count: 32)
        for name in names {
            let bytes = Array(name.canonicalName.utf8)
            table[bytes.count] = (table[bytes.count] ?? []) + [Known(bytes: bytes, name: name)]
        }
        return table
    }()

    /// Whether `bytes` equal `lowercase` when ASCII letters in `bytes` are lowercased.
    private static func matches(_ bytes: UnsafeRawBufferPointer, lowercase: [UInt8]) -> Bool {
        for index in 0..<lowercase.count {
            var byte = bytes[index]
            if byte >= 0x41 && byte <= 0x5A { byte |= 0x20 }
            if byte != lowercase[index] { return false }
        }
        return true
    }
}
