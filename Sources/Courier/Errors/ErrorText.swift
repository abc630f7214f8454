import Foundation

/// Text from a caller or a server, as a ``CourierError`` may repeat it.
///
/// An error's message, description and parameters are written to logs, so what they repeat
/// of their input is kept safe to log: never a query string (it may hold a token), never a
/// control character (a CR or LF could forge a log line, an escape sequence rewrite a
/// terminal), never unbounded. An offending character is named by its code point and
/// position, not shown: `a space (U+0020) at offset 14`.
enum ErrorText {
    /// The most characters of caller- or server-supplied text a message repeats.
    static let maximumLength = 64

    /// The most characters of a file's path a message repeats.
    static let maximumFilePathLength = 256

    /// A file's path as a message names it: sanitized, at most ``maximumFilePathLength``
    /// characters.
    static func file(_ path: String) -> String { sanitized(path, limit: maximumFilePathLength) }

    /// Whether `scalar` is never written into an error as it is: the C0 and C1 controls
    /// (CR, LF, NUL, ESC, DEL, NEL, …), the line and paragraph separators, and the
    /// bidirectional formatting characters, which reorder what a reader sees.
    static func isUnsafe(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069:
            true
        default:
            false
        }
    }

    /// `U+000A`.
    static func codePoint(_ scalar: Unicode.Scalar) -> String {
        let hex = String(scalar.value, radix: 16, uppercase: true)
        return "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
    }

    /// How a message names one character: `a space (U+0020)`, `a line feed (U+000A)`,
    /// `a control character (U+001B)`, `"<" (U+003C)`, `a non-ASCII character (U+00E9)`.
    static func describe(_ scalar: Unicode.Scalar) -> String {
        let name =
            switch scalar.value {
            case 0x20: "a space"
            case 0x09: "a tab"
            case 0x0A: "a line feed"
            case 0x0D: "a carriage return"
            case 0x00: "a NUL"
            case 0x22: "a quotation mark"
            case _ where isUnsafe(scalar): "a control character"
            case 0x21...0x7E: "\"\(Character(scalar))\""
            default: "a non-ASCII character"
            }
        return "\(name) (\(codePoint(scalar)))"
    }

    /// How a message names the character that starts at UTF-8 offset `offset` of `text`, as
    /// ``describe(_:)``; a message adds the offset (`a space (U+0020) at offset 14`).
    static func describe(characterAt offset: Int, in text: String) -> String {
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: offset)
        return describe(text.unicodeScalars[start...].first ?? "\u{FFFD}")
    }

    /// `text` with every unsafe character (``isUnsafe(_:)``) written as its code point
    /// (`<U+000A>`), cut to `limit` characters with `…`; `nil` for no limit.
    static func sanitized(_ text: some StringProtocol, limit: Int? = maximumLength) -> String {
        var count = 0
        var isClean = true
        for scalar in text.unicodeScalars {
            count += 1
            if isUnsafe(scalar) {
                isClean = false
                break
            }
        }
        if isClean, limit.map({ count <= $0 }) ?? true { return String(text) }
        var result = ""
        count = 0
        for scalar in text.unicodeScalars {
            if let limit, count == limit {
                result += "…"
                break
            }
            if isUnsafe(scalar) {
                result += "<\(codePoint(scalar))>"
            } else {
                result.unicodeScalars.append(scalar)
            }
            count += 1
        }
        return result
    }

    /// A URL as a message names it: scheme, host, port and path, sanitized and bounded; never
    /// its user information, query or fragment.
    static func url(_ url: URL) -> String {
        var text = url.scheme.map { "\($0)://" } ?? ""
        text += url.host ?? ""
        if let port = url.port { text += ":\(port)" }
        text += url.path
        return sanitized(text, limit: maximumFilePathLength)
    }

    /// A request target (a path, or an absolute URL) as a message may name it: the path
    /// without query or fragment, sanitized and bounded.
    static func path(of target: String) -> String {
        sanitized(target.prefix { $0 != "?" && $0 != "#" })
    }

    /// A path for an endpoint (`GET /path`): unsafe characters percent-encoded as a URL would
    /// carry them (`%0D%0A`), so that a path Courier can send is kept as it is.
    static func percentEncodingUnsafe(_ path: some StringProtocol) -> String {
        guard path.unicodeScalars.contains(where: isUnsafe) else { return String(path) }
        var result = ""
        for scalar in path.unicodeScalars {
            guard isUnsafe(scalar) else {
                result.unicodeScalars.append(scalar)
                continue
            }
            for byte in String(scalar).utf8 {
                result += "%" + (byte < 0x10 ? "0" : "") + String(byte, radix: 16, uppercase: true)
            }
        }
        return result
    }
}
