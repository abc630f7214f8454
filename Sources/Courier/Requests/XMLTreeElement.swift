/// An XML element as Courier's XML coding sees it: a name, attributes, the text directly
/// inside it, and child elements.
///
/// The encoder builds a tree of these and writes it; the parser reads a document into one.
/// Mixed content keeps the text runs joined in order, which is all a `Codable` mapping needs.
final class XMLTreeElement {
    let name: String
    var attributes: [(name: String, value: String)] = []
    var text = ""
    var children: [XMLTreeElement] = []

    init(name: String, text: String = "") {
        self.name = name
        self.text = text
    }

    /// Whether the element has no text, children or attributes: `<name/>`.
    var isEmpty: Bool { text.isEmpty && children.isEmpty && attributes.isEmpty }

    /// The first child element called `name`.
    func child(named name: String) -> XMLTreeElement? {
        children.first { $0.name == name }
    }

    /// The value of the attribute called `name`.
    func attribute(named name: String) -> String? {
        attributes.first { $0.name == name }?.value
    }

    /// Writes the element and its descendants, without indentation.
    ///
    /// - Throws: ``XMLCodingError`` for an invalid element name or text with a character
    ///   that XML 1.0 cannot hold.
    func write(into output: inout String) throws {
        guard Self.isValidName(name) else { throw XMLCodingError("`\(name)` is not a valid XML element name") }
        output += "<" + name
        for attribute in attributes {
            output += " \(attribute.name)=\""
            try Self.escape(attribute.value, into: &output, quotes: true)
            output += "\""
        }
        if text.isEmpty && children.isEmpty {
            output += "/>"
            return
        }
        output += ">"
        try Self.escape(text, into: &output, quotes: false)
        for child in children { try child.write(into: &output) }
        output += "</" + name + ">"
    }

    /// Escapes markup characters, and CR so that it survives line-end normalization.
    private static func escape(_ text: String, into output: inout String, quotes: Bool) throws {
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": output += "&amp;"
            case "<": output += "&lt;"
            case ">": output += "&gt;"
            case "\"" where quotes: output += "&quot;"
            case "\r": output += "&#13;"
            case "\t", "\n": output.unicodeScalars.append(scalar)
            default:
                guard scalar.value >= 0x20, scalar.value != 0xFFFE, scalar.value != 0xFFFF else {
                    throw XMLCodingError(
                        "XML 1.0 cannot hold the character U+\(String(scalar.value, radix: 16, uppercase: true))"
                    )
                }
                output.unicodeScalars.append(scalar)
            }
        }
    }

    /// A simplified XML 1.0 `Name` without colons: a letter, `_` or a non-ASCII character
    /// first, then letters, digits, `-`, `.`, `_` or non-ASCII characters.
    static func isValidName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first else { return false }
        func isStart(_ scalar: Unicode.Scalar) -> Bool {
            scalar.properties.isAlphabetic || scalar == "_" || scalar.value >= 0xC0
        }
        guard isStart(first) else { return false }
        return name.unicodeScalars.allSatisfy { scalar in
            isStart(scalar) || ("0"..."9").contains(scalar) || scalar == "-" || scalar == "."
        }
    }
}

/// Why XML could not be written or read.
struct XMLCodingError: Error, CustomStringConvertible {
    let description: String

    init(_ description: String) {
        self.description = description
    }
}
