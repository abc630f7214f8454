import Foundation

/// Reads an XML 1.0 document into an ``XMLTreeElement`` tree.
///
/// Supported: the XML declaration and processing instructions (skipped), comments
/// (skipped), elements, attributes, text, CDATA sections, the five predefined entities and
/// character references, and line-end normalization. Refused: document type declarations
/// (so no external entities and no entity expansion), undefined entities, mismatched tags,
/// and nesting deeper than ``maximumDepth``.
enum XMLTreeParser {
    static let maximumDepth = 256

    static func parse(_ data: Data) throws -> XMLTreeElement {
        var parser = Parser(bytes: [UInt8](data))
        return try parser.document()
    }

    private struct Parser {
        let bytes: [UInt8]
        var index = 0

        init(bytes: [UInt8]) {
            self.bytes = bytes
        }

        mutating func document() throws -> XMLTreeElement {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { index = 3 }
            var stack: [XMLTreeElement] = []
            var root: XMLTreeElement?
            while index < bytes.count {
                guard bytes[index] == UInt8(ascii: "<") else {
                    let start = index
                    while index < bytes.count && bytes[index] != UInt8(ascii: "<") { index += 1 }
                    let run = bytes[start..<index]
                    if let open = stack.last {
                        open.text += try Self.decodeText(run)
                    } else if !run.allSatisfy(Self.isWhitespace) {
                        throw failure("text outside the root element")
                    }
                    continue
                }
                if skip("<?") {
                    try skip(past: "?>")
                } else if skip("<!--") {
                    try skip(past: "-->")
                } else if skip("<![CDATA[") {
                    guard let open = stack.last else { throw failure("CDATA outside the root element") }
                    let start = index
                    try skip(past: "]]>")
                    open.text += Self.normalizeLineEnds(bytes[start..<(index - 3)])
                } else if skip("<!") {
                    throw failure("document type declarations are not supported")
                } else if skip("</") {
                    let name = try self.name()
                    skipWhitespace()
                    guard skip(">") else { throw failure("malformed end tag </\(name)") }
                    guard let open = stack.popLast(), open.name == name else {
                        throw failure("unexpected end tag </\(name)>")
                    }
                } else {
                    index += 1
                    guard root == nil || !stack.isEmpty else { throw failure("a second root element") }
                    let (element, isClosed) = try startTag()
                    if let parent = stack.last { parent.children.append(element) } else { root = element }
                    if !isClosed {
                        stack.append(element)
                        guard stack.count <= XMLTreeParser.maximumDepth else {
                            throw failure("elements nest too deeply")
                        }
                    }
                }
            }
            guard stack.isEmpty else { throw failure("element <\(stack.last!.name)> is not closed") }
            guard let root else { throw failure("no root element") }
            return root
        }

        /// Reads a start tag after its `<`; `true` when it closes itself.
        private mutating func startTag() throws -> (XMLTreeElement, Bool) {
            let element = XMLTreeElement(name: try name())
            while true {
                skipWhitespace()
                if skip("/>") { return (element, true) }
                if skip(">") { return (element, false) }
                let attribute = try name()
                skipWhitespace()
                guard skip("=") else { throw failure("attribute \(attribute) has no value") }
                skipWhitespace()
                guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") || bytes[index] == UInt8(ascii: "'")
                else {
                    throw failure("attribute \(attribute) is not quoted")
                }
                let quote = bytes[index]
                index += 1
                let start = index
                while index < bytes.count && bytes[index] != quote {
                    guard bytes[index] != UInt8(ascii: "<") else { throw failure("`<` in attribute \(attribute)") }
                    index += 1
                }
                guard index < bytes.count else { throw failure("attribute \(attribute) is not closed") }
                element.attributes.append((attribute, try Self.decodeText(bytes[start..<index])))
                index += 1
            }
        }

        private mutating func name() throws -> String {
            let start = index
            while index < bytes.count {
                let byte = bytes[index]
                if Self.isWhitespace(byte) || byte == UInt8(ascii: "/") || byte == UInt8(ascii: ">")
                    || byte == UInt8(ascii: "=")
                {
                    break
                }
                index += 1
            }
            guard index > start else { throw failure("a name is missing") }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        private mutating func skip(_ literal: StaticString) -> Bool {
            let count = literal.utf8CodeUnitCount
            guard index + count <= bytes.count else { return false }
            let matches = literal.withUTF8Buffer { bytes[index..<(index + count)].elementsEqual($0) }
            if matches { index += count }
            return matches
        }

        private mutating func skip(past terminator: StaticString) throws {
            while index < bytes.count {
                if skip(terminator) { return }
                index += 1
            }
            throw failure("unterminated markup, expected \(terminator)")
        }

        private mutating func skipWhitespace() {
            while index < bytes.count && Self.isWhitespace(bytes[index]) { index += 1 }
        }

        private func failure(_ message: String) -> XMLCodingError {
            XMLCodingError("malformed XML at byte \(index): \(message)")
        }

        private static func isWhitespace(_ byte: UInt8) -> Bool {
            byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }

        private static func normalizeLineEnds(_ run: ArraySlice<UInt8>) -> String {
            var output: [UInt8] = []
            output.reserveCapacity(run.count)
            var previousWasCR = false
            for byte in run {
                if byte == 0x0D {
                    output.append(0x0A)
                } else if !(byte == 0x0A && previousWasCR) {
                    output.append(byte)
                }
                previousWasCR = byte == 0x0D
            }
            return String(decoding: output, as: UTF8.self)
        }

        /// Normalizes line ends and replaces entity and character references.
        private static func decodeText(_ run: ArraySlice<UInt8>) throws -> String {
            let text = normalizeLineEnds(run)
            guard text.contains("&") else { return text }
            var output = ""
            var rest = Substring(text)
            while let ampersand = rest.firstIndex(of: "&") {
                output += rest[..<ampersand]
                guard let semicolon = rest[ampersand...].firstIndex(of: ";") else {
                    throw XMLCodingError("malformed XML: `&` without `;`")
                }
                let reference = rest[rest.index(after: ampersand)..<semicolon]
                output.unicodeScalars.append(try scalar(for: reference))
                rest = rest[rest.index(after: semicolon)...]
            }
            return output + rest
        }

        private static func scalar(for reference: Substring) throws -> Unicode.Scalar {
            switch reference {
            case "lt": return "<"
            case "gt": return ">"
            case "amp": return "&"
            case "quot": return "\""
            case "apos": return "'"
            default:
                var code: UInt32?
                if reference.hasPrefix("#x") {
                    code = UInt32(reference.dropFirst(2), radix: 16)
                } else if reference.hasPrefix("#") {
                    code = UInt32(reference.dropFirst(), radix: 10)
                }
                guard let code, let scalar = Unicode.Scalar(code), code != 0 else {
                    throw XMLCodingError("malformed XML: unknown entity &\(reference);")
                }
                return scalar
            }
        }
    }
}
