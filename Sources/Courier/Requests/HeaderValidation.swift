import HTTPTypes

/// Checks the header fields of a ``ResourceRequest`` and turns them into `HTTPFields`.
enum HeaderValidation {
    /// Fields Courier sets itself: the credentials and the User-Agent (security invariant 2),
    /// and the framing fields that come from the URL and the body.
    static let reservedNames: [HTTPField.Name] = [
        .userAgent, .authorization, HTTPField.Name("Host")!, .contentLength, .transferEncoding,
    ]

    /// The fields, in the order of their lower-cased names.
    ///
    /// Leading and trailing spaces and tabs of a value are dropped, as RFC 9110 asks.
    ///
    /// - Throws: ``RequestError/invalidHeader`` for a name that is not a token, a value with
    ///   CR, LF, NUL or another control character, or a name given twice (in any case);
    ///   ``RequestError/reservedHeader`` for a field that Courier owns.
    static func fields(from headers: [String: String]) throws -> HTTPFields {
        var fields = HTTPFields()
        let sorted = headers.sorted { $0.key.lowercased().utf8.lexicographicallyPrecedes($1.key.lowercased().utf8) }
        for (rawName, rawValue) in sorted {
            guard let name = HTTPField.Name(rawName) else {
                throw RequestError(
                    kind: .invalidHeader,
                    message: "`\(rawName.debugDescription)` is not a valid header name"
                )
            }
            if let reserved = reservedNames.first(where: { $0 == name }) {
                throw RequestError(
                    kind: .reservedHeader,
                    message: "\(reserved.rawName) is set by Courier; a request may not set it"
                        + (reserved == .userAgent
                            ? " (add your product with Session.Configuration.applicationProduct)" : "")
                )
            }
            guard fields[name] == nil else {
                throw RequestError(
                    kind: .invalidHeader,
                    message: "the header \(rawName) is given twice (names ignore case)"
                )
            }
            fields.append(HTTPField(name: name, value: try checkedValue(rawValue, name: rawName)))
        }
        return fields
    }

    /// The value without surrounding whitespace.
    ///
    /// - Throws: ``RequestError/invalidHeader`` when it holds a control character other
    ///   than a tab: CR and LF would let a value inject header lines.
    static func checkedValue(_ value: String, name: String) throws -> String {
        for byte in value.utf8 where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            let what = byte == 0x0D || byte == 0x0A ? "CR or LF" : byte == 0 ? "NUL" : "a control character"
            throw RequestError(kind: .invalidHeader, message: "the value of header \(name) contains \(what)")
        }
        let whitespace: Set<Character> = [" ", "\t"]
        var trimmed = Substring(value)
        while let first = trimmed.first, whitespace.contains(first) { trimmed.removeFirst() }
        while let last = trimmed.last, whitespace.contains(last) { trimmed.removeLast() }
        return String(trimmed)
    }
}
