/// A parsed `Content-Type` value: `type/subtype` and its parameters (RFC 9110 §8.3.1).
///
/// Type, subtype and parameter names are lower-cased; parameter values keep their case,
/// with the quotes of quoted strings removed.
public struct MediaType: Sendable, Hashable, CustomStringConvertible {
    /// The type, such as `text`.
    public let type: String
    /// The subtype, such as `html` or `vnd.api+json`.
    public let subtype: String
    /// The parameters by lower-cased name, such as `["charset": "utf-8"]`.
    public let parameters: [String: String]

    /// Parses a `Content-Type` value.
    ///
    /// - Parameter value: The value, such as `text/html; charset="UTF-8"`.
    /// - Returns: `nil` when there is no `type/subtype`.
    public init?(parsing value: String) {
        let pieces = Self.splitParameters(value)
        let essence = pieces[0].trimmingSpaces().lowercased()
        guard let slash = essence.firstIndex(of: "/") else { return nil }
        let type = String(essence[..<slash])
        let subtype = String(essence[essence.index(after: slash)...])
        guard !type.isEmpty, !subtype.isEmpty else { return nil }
        var parameters: [String: String] = [:]
        for piece in pieces.dropFirst() {
            guard let equals = piece.firstIndex(of: "=") else { continue }
            let name = piece[..<equals].trimmingSpaces().lowercased()
            var value = piece[piece.index(after: equals)...].trimmingSpaces()
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
                value = String(value.dropFirst().dropLast()).replacingBackslashEscapes()
            }
            if !name.isEmpty && parameters[name] == nil { parameters[name] = value }
        }
        self.type = type
        self.subtype = subtype
        self.parameters = parameters
    }

    /// The `charset` parameter, lower-cased.
    public var charset: String? { parameters["charset"]?.lowercased() }

    /// Whether the media type is XML: `application/xml`, `text/xml` or a `+xml` subtype.
    public var isXML: Bool { subtype == "xml" || subtype.hasSuffix("+xml") }

    /// Whether the media type is JSON: `application/json` or a `+json` subtype.
    public var isJSON: Bool { subtype == "json" || subtype.hasSuffix("+json") }

    /// `type/subtype`, without parameters.
    public var description: String { "\(type)/\(subtype)" }

    /// Splits at semicolons outside quoted strings.
    private static func splitParameters(_ value: String) -> [Substring] {
        var pieces: [Substring] = []
        var start = value.startIndex
        var quoted = false
        var escaped = false
        for index in value.indices {
            let character = value[index]
            if escaped {
                escaped = false
            } else if quoted && character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ";" && !quoted {
                pieces.append(value[start..<index])
                start = value.index(after: index)
            }
        }
        pieces.append(value[start...])
        return pieces
    }
}

extension StringProtocol {
    fileprivate func trimmingSpaces() -> String {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return String(text)
    }

    fileprivate func replacingBackslashEscapes() -> String {
        var result = ""
        var escaped = false
        for character in self {
            if !escaped && character == "\\" {
                escaped = true
                continue
            }
            escaped = false
            result.append(character)
        }
        return result
    }
}
