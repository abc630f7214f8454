import HTTPTypes

/// Checks the header fields of a ``ResourceRequest`` and turns them into `HTTPFields`.
enum HeaderValidation {
    /// Fields Courier sets itself: the credentials (`Authorization` and a DPoP proof) and the
    /// User-Agent (security invariant 2),
    /// and the framing fields that come from the URL and the body.
    static let reservedNames: [HTTPField.Name] = [
        .userAgent, .authorization, .dpop, HTTPField.Name("Host")!, .contentLength, .transferEncoding,
    ]

    /// The fields, checked: none that Courier owns, no control character in a value.
    ///
    /// Leading and trailing spaces and tabs of a value are dropped, as RFC 9110 asks.
    ///
    /// - Throws: ``CourierError/Kind/invalidHeader`` for a value with CR, LF, NUL or another
    ///   control character; ``CourierError/Kind/reservedHeader`` for a field that Courier owns.
    static func checked(_ fields: HTTPFields) throws -> HTTPFields {
        var checked = HTTPFields()
        checked.reserveCapacity(fields.count)
        for field in fields {
            if let reserved = reservedNames.first(where: { $0 == field.name }) {
                throw CourierError.reservedHeader(
                    "\(ErrorText.sanitized(reserved.rawName)) is set by Courier; a request may not set it"
                        + (reserved == .userAgent
                            ? " (add your product with Session.Configuration.applicationProduct)" : "")
                )
            }
            checked.append(HTTPField(name: field.name, value: try checkedValue(field.value, name: field.name.rawName)))
        }
        return checked
    }

    /// The value without surrounding whitespace.
    ///
    /// - Throws: ``CourierError/Kind/invalidHeader`` when it holds a control character other
    ///   than a tab: CR and LF would let a value inject header lines. The message names the
    ///   character and its UTF-8 offset, never the value.
    static func checkedValue(_ value: String, name: String) throws -> String {
        for (offset, byte) in value.utf8.enumerated() where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            throw CourierError(
                kind: .invalidHeader,
                message: "the value of header \(ErrorText.sanitized(name)) has "
                    + "\(ErrorText.describe(Unicode.Scalar(byte))) at offset \(offset)"
            )
        }
        let whitespace: Set<Character> = [" ", "\t"]
        var trimmed = Substring(value)
        while let first = trimmed.first, whitespace.contains(first) { trimmed.removeFirst() }
        while let last = trimmed.last, whitespace.contains(last) { trimmed.removeLast() }
        return String(trimmed)
    }
}
