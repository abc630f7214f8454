import Foundation
import HTTPTypes

/// Reads a response head line by line, as libcurl's header callback hands it over, within
/// ``ResponseHeadLimits``.
///
/// A value kept inside its transfer: parsing a line allocates nothing beyond the field it
/// stores, and a head that repeats its origin's last one line for line (``ResponseHeadMemo``)
/// allocates nothing at all. A head starts with a status line (after an interim 1xx head, another follows) and
/// ends with a blank line; field lines after the final head are the trailer section, kept
/// apart from the head's fields. A head whose first line is not a valid status line is
/// malformed: libcurl accepts some that HTTP does not (`Http/1.1 200`), and Courier never
/// makes up a status the server did not send.
struct ResponseHeadParser {
    /// What a line was.
    enum Line: Equatable {
        /// A status line: a head begins.
        case statusLine
        /// A field, or a line that is ignored (obsolete folding, no colon, an invalid name).
        case field
        /// The blank line that ends a head.
        case end
        /// A line of the trailer section, or the blank line that ends it.
        case trailer
        /// The line, or the head so far, is over the limit; `line` when the line alone is.
        case tooLarge(line: Bool)
        /// A head begins with something other than a valid status line, or gives no single
        /// length for its body (`Content-Length` invalid, or two that differ).
        case malformed(Malformation)
    }

    /// How a head is malformed.
    enum Malformation: Equatable {
        /// It does not start with a valid status line.
        case statusLine
        /// Its `Content-Length` is not a number, or two values differ.
        case contentLength

        /// What the error says.
        var message: String {
            switch self {
            case .statusLine: "the server's answer does not start with a valid HTTP status line"
            case .contentLength: "the response's Content-Length is not one valid length"
            }
        }
    }

    /// Which part of the response the next line belongs to.
    private enum Section {
        /// A status line must come.
        case statusLine
        /// The fields of a head.
        case fields
        /// The final head ended: fields now are trailers.
        case trailers
    }

    /// The status code of the latest status line; `0` before one.
    private(set) var statusCode = 0
    /// The fields of the latest head.
    private(set) var fields = HTTPFields()
    /// The trailer fields, `nil` until one arrives (an empty `HTTPFields` would cost an
    /// allocation per response).
    private(set) var trailerFields: HTTPFields?
    /// The latest head's `Content-Length`; `-1` without one.
    private(set) var expectedLength: Int64 = -1
    /// Whether the latest head said `Transfer-Encoding: chunked`.
    private(set) var isChunked = false
    /// Whether the latest head named a `Content-Encoding` other than `identity`.
    private(set) var isContentEncoded = false
    /// Whether the latest status line was HTTP/1.x.
    private(set) var isHTTP1 = false
    /// Bytes of the current head (or trailer section) so far, for ``ResponseHeadLimits``.
    private(set) var headBytes = 0
    private var section = Section.statusLine
    /// The final head as a response head, once it ended: the memo's own when every line
    /// matched it.
    private(set) var responseHead: HTTPResponse?

    // The origin's memo (ResponseHeadMemo.swift).
    /// The memo of the origin, which keeps the current head when it differs.
    private var memo: ResponseHeadMemo?
    /// The origin's last head as it was when the current head began: the lines are compared
    /// with it alone, whatever other transfers keep meanwhile.
    private var memoHead: ResponseHeadMemo.Head?
    /// Whether every line of the current head so far matched the memo.
    private var isMatching = false
    /// Lines of the current head that matched the memo, the status line included.
    private var matchedLines = 0
    /// Fields among them (an ignored line has none).
    private var matchedFields = 0
    /// The current head's lines, from the memo's that matched on, to become the new memo.
    private var recording: ResponseHeadMemo.Recording?

    /// Takes one line, line end included.
    ///
    /// - Parameters:
    ///   - line: The line.
    ///   - memo: The last final head of the response's origin, which a head that repeats it
    ///     shares; `nil` to parse every line.
    mutating func receive(_ line: UnsafeRawBufferPointer, memo: ResponseHeadMemo? = nil) -> Line {
        let bytes = line.trimmingLineEnd()
        if bytes.isEmpty {
            headBytes = 0  // trailers and a 1xx's successor count anew
            switch section {
            case .statusLine: return .malformed(.statusLine)
            case .fields:
                section = statusCode >= 200 ? .trailers : .statusLine
                finishHead()
                return .end
            case .trailers: return .trailer
            }
        }
        headBytes += line.count
        if line.count > ResponseHeadLimits.maximumLineBytes || headBytes > ResponseHeadLimits.maximumSectionBytes {
            return .tooLarge(line: line.count > ResponseHeadLimits.maximumLineBytes)
        }
        // After a final head a status line is a new head: libcurl sends a request again by
        // itself in a few cases (after a 417 to an expectation); trailer fields never look so.
        if section == .trailers, bytes.statusCode != nil { section = .statusLine }
        switch section {
        case .statusLine:
            guard let code = bytes.statusCode else { return .malformed(.statusLine) }
            statusCode = code
            fields = HTTPFields()
            expectedLength = -1
            isChunked = false
            isContentEncoded = false
            isHTTP1 = bytes[6] == UInt8(ascii: ".")
            trailerFields = nil
            responseHead = nil
            section = .fields
            self.memo = memo
            memoHead = memo?.last
            recording = nil
            if let memoHead, memoHead.matches(line, at: 0) {
                isMatching = true
                matchedLines = 1
                matchedFields = 0
            } else {
                isMatching = false
                fields.reserveCapacity(16)  // one allocation for a typical response head
                if memo != nil {
                    recording = ResponseHeadMemo.Recording()
                    recording?.append(line, effect: nil)
                }
            }
            return .statusLine
        case .fields:
            if isMatching, let memoHead {
                if memoHead.matches(line, at: matchedLines) {
                    let effect = memoHead.effect(ofLine: matchedLines)
                    matchedLines += 1
                    if effect != .ignored { matchedFields += 1 }
                    return apply(effect) ?? .field
                }
                diverge(from: memoHead)
            }
            guard let (field, nameLength) = Self.field(bytes) else {
                recording?.append(line, effect: .ignored)
                return .field
            }
            guard let effect = Self.effect(of: field, nameLength: nameLength) else { return .malformed(.contentLength) }
            if let malformed = apply(effect) { return malformed }
            fields.append(field)
            recording?.append(line, effect: effect)
            return .field
        case .trailers:
            if let (field, _) = Self.field(bytes) {
                if trailerFields == nil { trailerFields = HTTPFields() }
                trailerFields?.append(field)
            }
            return .trailer
        }
    }

    /// What a field does to the head besides adding itself; `nil` for a `Content-Length` that
    /// gives no length.
    static func effect(of field: HTTPField, nameLength: Int) -> ResponseHeadMemo.Effect? {
        // Name lengths first: most fields are none of these three.
        if nameLength == 14, field.name == .contentLength {
            return contentLength(field.value).map { .contentLength($0) }
        } else if nameLength == 17, field.name == .transferEncoding {
            // A list of codings, in one field or several: chunked is the last.
            let last = field.value.split(separator: ",").last?.trimmingCharacters(in: .whitespaces)
            return .transferEncoding(chunked: last?.lowercased() == "chunked")
        } else if nameLength == 16, field.name == .contentEncoding {
            return .contentEncoding(encoded: field.value.lowercased() != "identity")
        }
        return ResponseHeadMemo.Effect.none
    }

    /// Applies what a field line does to the head; returns `.malformed` for a second
    /// `Content-Length` that differs from the first.
    private mutating func apply(_ effect: ResponseHeadMemo.Effect) -> Line? {
        switch effect {
        case .none, .ignored:
            break
        case .contentLength(let length):
            // One length, or a list of the same one: anything else leaves the body's end
            // unknown (libcurl takes the first), so the response cannot be trusted.
            guard expectedLength < 0 || expectedLength == length else { return .malformed(.contentLength) }
            expectedLength = length
        case .transferEncoding(let chunked):
            isChunked = chunked
        case .contentEncoding(let encoded):
            isContentEncoded = isContentEncoded || encoded
        }
        return nil
    }

    /// The current head differs from the memo from here on: its fields so far are the memo's
    /// first ones, and its lines are recorded to become the next memo.
    private mutating func diverge(from memoHead: ResponseHeadMemo.Head) {
        isMatching = false
        var rebuilt = HTTPFields()
        rebuilt.reserveCapacity(16)
        rebuilt.append(contentsOf: memoHead.head.headerFields.prefix(matchedFields))
        fields = rebuilt
        recording = memoHead.recording(ofFirst: matchedLines)
    }

    /// The blank line ended a head: a final head gets its response head, the memo's when every
    /// line matched it, else a new one that becomes the memo.
    private mutating func finishHead() {
        if isMatching, let memoHead {
            if matchedLines == memoHead.lineCount {
                isMatching = false
                fields = memoHead.head.headerFields
                responseHead = memoHead.head
                return
            }
            diverge(from: memoHead)  // the head ended before the memo's
        }
        guard statusCode >= 200 else { return }
        let head = HTTPResponse(status: .standard(code: statusCode), headerFields: fields)
        responseHead = head
        if let memo, let recording { memo.keep(recording, head: head) }
        recording = nil
    }

    /// Takes the trailer fields that arrived some other way (a body whose chunked framing
    /// Courier reads itself).
    mutating func receiveTrailers(_ trailers: HTTPFields) {
        guard !trailers.isEmpty else { return }
        if trailerFields == nil { trailerFields = HTTPFields() }
        trailerFields?.append(contentsOf: trailers)
    }

    /// The field a line holds and the length of its name, or `nil` for a line that is ignored
    /// (obsolete line folding, no colon, an invalid name).
    static func field(_ bytes: UnsafeRawBufferPointer) -> (HTTPField, nameLength: Int)? {
        if bytes.first == 0x20 || bytes.first == 0x09 { return nil }  // obsolete line folding
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let nameBytes = UnsafeRawBufferPointer(rebasing: bytes[..<colon])
        let valueBytes = UnsafeRawBufferPointer(rebasing: bytes[(colon + 1)...]).trimmingWhitespace()
        guard let name = ResponseFieldName.name(nameBytes) else { return nil }
        return (HTTPField(name: name, value: String(decoding: valueBytes, as: UTF8.self)), nameBytes.count)
    }

    /// The length a `Content-Length` value gives: digits, or a list of the same digits; `nil`
    /// for anything else.
    static func contentLength(_ value: String) -> Int64? {
        if let length = Int64(value), length >= 0, value.utf8.allSatisfy({ (48...57).contains($0) }) { return length }
        var length: Int64?
        for item in value.split(separator: ",", omittingEmptySubsequences: false) {
            let digits = item.trimmingCharacters(in: .whitespaces)
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (48...57).contains($0) }), let value = Int64(digits),
                length == nil || length == value
            else { return nil }
            length = value
        }
        return length
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

    /// The status code of a valid status line, such as `HTTP/1.1 200 OK`, `HTTP/1.1 204` or
    /// libcurl's `HTTP/2 200`; `nil` for anything else.
    ///
    /// The version is `HTTP/` (case-sensitive) and one digit, with `.` and a second digit for
    /// HTTP/1.x; then one space and three digits, the first of them 1–9 (a status in 100–999);
    /// then the end of the line or a space before the reason phrase.
    var statusCode: Int? {
        guard count >= 10, starts(with: "HTTP/".utf8), self[5].isDigit else { return nil }
        var index = 6
        if self[index] == UInt8(ascii: ".") {
            guard self[index + 1].isDigit else { return nil }
            index += 2
        }
        guard index + 4 <= count, self[index] == 0x20 else { return nil }
        var code = 0
        for digit in self[(index + 1)..<(index + 4)] {
            guard digit.isDigit else { return nil }
            code = code * 10 + Int(digit - 48)
        }
        guard code >= 100 else { return nil }
        let next = index + 4
        guard next == count || self[next] == 0x20 else { return nil }
        return code
    }
}

extension UInt8 {
    fileprivate var isDigit: Bool { (48...57).contains(self) }
}
