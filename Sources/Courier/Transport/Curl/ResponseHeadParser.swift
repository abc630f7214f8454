import HTTPTypes

/// Reads a response head line by line, as libcurl's header callback hands it over, within
/// ``ResponseHeadLimits``.
///
/// A value kept inside its transfer: parsing a line allocates nothing beyond the field it
/// stores. A status line starts a new head (after an interim 1xx one); the blank line ends
/// one; field lines after the final head are trailers and join the fields.
struct ResponseHeadParser {
    /// What a line was.
    enum Line: Equatable {
        /// A status line: a head begins.
        case statusLine
        /// A field, or a line that is ignored (obsolete folding, no colon, an invalid name).
        case field
        /// The blank line that ends a head.
        case end
        /// The line, or the head so far, is over the limit; `line` when the line alone is.
        case tooLarge(line: Bool)
    }

    /// The status code of the latest status line; `0` before one.
    private(set) var statusCode = 0
    /// The fields of the latest head, and any trailers.
    private(set) var fields = HTTPFields()
    /// The latest head's `Content-Length`; `-1` without one.
    private(set) var expectedLength: Int64 = -1
    /// Bytes of the current head so far, for ``ResponseHeadLimits``.
    private(set) var headBytes = 0

    /// Takes one line, line end included.
    mutating func receive(_ line: UnsafeRawBufferPointer) -> Line {
        let bytes = line.trimmingLineEnd()
        if bytes.isEmpty {
            headBytes = 0  // trailers, a 1xx's successor or a redirect's response count anew
            return .end
        }
        let isStatusLine = bytes.starts(with: "HTTP/".utf8)
        headBytes = isStatusLine ? line.count : headBytes + line.count
        if line.count > ResponseHeadLimits.maximumLineBytes || headBytes > ResponseHeadLimits.maximumSectionBytes {
            return .tooLarge(line: line.count > ResponseHeadLimits.maximumLineBytes)
        }
        if isStatusLine {
            statusCode = bytes.statusCode ?? 0
            fields = HTTPFields()
            fields.reserveCapacity(16)  // one allocation for a typical response head
            expectedLength = -1
            return .statusLine
        }
        if bytes.first == 0x20 || bytes.first == 0x09 {
            return .field  // obsolete line folding is not supported; ignore the continuation
        }
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return .field }
        let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[..<colon])
        let valueBytes = UnsafeRawBufferPointer(rebasing: bytes[(colon + 1)...]).trimmingWhitespace()
        guard let name = ResponseFieldName.name(nameBytes) else { return .field }
        let value = String(decoding: valueBytes, as: UTF8.self)
        if nameBytes.count == 14, name == .contentLength, let length = Int64(value) { expectedLength = length }
        fields.append(HTTPField(name: name, value: value))
        return .field
    }

    /// Forgets everything: the transfer goes again on a fresh connection.
    mutating func reset() {
        self = ResponseHeadParser()
    }
}

extension UnsafeRawBufferPointer {
    func trimmingLineEnd() -> UnsafeRawBufferPointer {
        var end = count
        while end > 0, self[end - 1] == 0x0A || self[end - 1] == 0x0D { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: self[..<end])
    }

    func trimmingWhitespace() -> UnsafeRawBufferPointer {
        var start = 0
        var end = count
        while start < end, self[start] == 0x20 || self[start] == 0x09 { start += 1 }
        while end > start, self[end - 1] == 0x20 || self[end - 1] == 0x09 { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: self[start..<end])
    }

    /// The status code of a status line such as `HTTP/1.1 200 OK` or `HTTP/2 204`.
    var statusCode: Int? {
        guard let space = firstIndex(of: 0x20), space + 3 < count else { return nil }
        var code = 0
        for index in (space + 1)..<(space + 4) {
            let digit = Int(self[index]) - 48
            guard (0...9).contains(digit) else { return nil }
            code = code * 10 + digit
        }
        return code
    }
}
