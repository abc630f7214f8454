import Foundation

/// Decodes a `Decodable` value from an XML document.
///
/// The mapping mirrors ``XMLTreeEncoder``: a property is the first child element named by
/// its key, or else the attribute of that name; an array property is every child element
/// named by its key (none gives an empty array); any other array (the root value, an array
/// in an array, a custom `nestedUnkeyedContainer`) is the child elements of its element,
/// whatever their names; a scalar is its element's text, trimmed of whitespace for numbers
/// and Booleans (`true`, `false`, `1`, `0`); a missing key is `nil` for an optional. The
/// root element's name is not checked. A wrapped list such as `<items><item/>…</items>` is
/// a property `items` of a type with an array property `item`.
struct XMLTreeDecoder {
    /// The decoded value.
    ///
    /// - Throws: ``XMLCodingError`` for malformed XML, `DecodingError` for a mismatch.
    func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let root = try XMLTreeParser.parse(data)
        return try XMLElementDecoder(element: root, codingPath: []).decodeValue(type)
    }
}

/// A `Decoder` that reads one element.
struct XMLElementDecoder: Decoder {
    let element: XMLTreeElement
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(KeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        UnkeyedContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        SingleValueContainer(decoder: self)
    }

    /// Reads a scalar from the text, anything else through its `init(from:)`.
    func decodeValue<T: Decodable>(_ type: T.Type) throws -> T {
        if type == String.self { return element.text as! T }
        if Self.scalarTypes.contains(ObjectIdentifier(type)) {
            let text = element.text.trimmingCharacters(in: .whitespacesAndNewlines)
            let value: Any? =
                switch type {
                case is Bool.Type: text == "true" || text == "1" ? true : text == "false" || text == "0" ? false : nil
                case is Decimal.Type: Decimal(string: text)
                case is URL.Type: URL(string: text)
                default: (type as? any LosslessStringConvertible.Type)?.init(text)
                }
            guard let value = value as? T else {
                throw DecodingError.dataCorrupted(
                    .init(codingPath: codingPath, debugDescription: "`\(text)` is not a \(T.self)")
                )
            }
            return value
        }
        return try T(from: self)
    }

    private static let scalarTypes: Set<ObjectIdentifier> = [
        ObjectIdentifier(Bool.self), ObjectIdentifier(Double.self), ObjectIdentifier(Float.self),
        ObjectIdentifier(Int.self), ObjectIdentifier(Int8.self), ObjectIdentifier(Int16.self),
        ObjectIdentifier(Int32.self), ObjectIdentifier(Int64.self), ObjectIdentifier(UInt.self),
        ObjectIdentifier(UInt8.self), ObjectIdentifier(UInt16.self), ObjectIdentifier(UInt32.self),
        ObjectIdentifier(UInt64.self), ObjectIdentifier(Decimal.self), ObjectIdentifier(URL.self),
    ]

    private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let decoder: XMLElementDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        var allKeys: [Key] {
            var seen = Set<String>()
            let names = decoder.element.children.map(\.name) + decoder.element.attributes.map(\.name)
            return names.filter { seen.insert($0).inserted }.compactMap(Key.init(stringValue:))
        }

        func contains(_ key: Key) -> Bool { element(for: key) != nil }

        private func element(for key: Key) -> XMLTreeElement? {
            if let child = decoder.element.child(named: key.stringValue) { return child }
            return decoder.element.attribute(named: key.stringValue).map {
                XMLTreeElement(name: key.stringValue, text: $0)
            }
        }

        private func decoder(for key: Key) throws -> XMLElementDecoder {
            guard let element = element(for: key) else {
                throw DecodingError.keyNotFound(
                    key,
                    .init(codingPath: codingPath, debugDescription: "no element or attribute `\(key.stringValue)`")
                )
            }
            return XMLElementDecoder(element: element, codingPath: codingPath + [key])
        }

        func decodeNil(forKey key: Key) throws -> Bool { !contains(key) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            if type is any XMLDecodableList.Type {
                let list = XMLTreeElement(name: key.stringValue)
                list.children = decoder.element.children.filter { $0.name == key.stringValue }
                return try XMLElementDecoder(element: list, codingPath: codingPath + [key]).decodeValue(type)
            }
            return try decoder(for: key).decodeValue(type)
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type,
            forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try decoder(for: key).container(keyedBy: type)
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            try decoder(for: key).unkeyedContainer()
        }

        func superDecoder() throws -> any Decoder {
            let element = decoder.element.child(named: "super") ?? XMLTreeElement(name: "super")
            return XMLElementDecoder(element: element, codingPath: codingPath + [AnyKey("super")])
        }

        func superDecoder(forKey key: Key) throws -> any Decoder { try decoder(for: key) }
    }

    private struct UnkeyedContainer: UnkeyedDecodingContainer {
        let decoder: XMLElementDecoder
        private(set) var currentIndex = 0
        var codingPath: [any CodingKey] { decoder.codingPath }
        var count: Int? { decoder.element.children.count }
        var isAtEnd: Bool { currentIndex >= decoder.element.children.count }

        init(decoder: XMLElementDecoder) {
            self.decoder = decoder
        }

        private mutating func nextDecoder<T>(for type: T.Type) throws -> XMLElementDecoder {
            guard !isAtEnd else {
                throw DecodingError.valueNotFound(
                    type,
                    .init(codingPath: codingPath, debugDescription: "no element left at index \(currentIndex)")
                )
            }
            defer { currentIndex += 1 }
            return XMLElementDecoder(
                element: decoder.element.children[currentIndex],
                codingPath: codingPath + [AnyKey(intValue: currentIndex)]
            )
        }

        mutating func decodeNil() throws -> Bool {
            guard !isAtEnd, decoder.element.children[currentIndex].isEmpty else { return false }
            currentIndex += 1
            return true
        }

        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
            try nextDecoder(for: type).decodeValue(type)
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> {
            try nextDecoder(for: KeyedDecodingContainer<NestedKey>.self).container(keyedBy: type)
        }

        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
            try nextDecoder(for: [Any].self).unkeyedContainer()
        }

        mutating func superDecoder() throws -> any Decoder {
            try nextDecoder(for: Any.self)
        }
    }

    private struct SingleValueContainer: SingleValueDecodingContainer {
        let decoder: XMLElementDecoder
        var codingPath: [any CodingKey] { decoder.codingPath }

        func decodeNil() -> Bool { decoder.element.text.isEmpty && decoder.element.children.isEmpty }

        func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.decodeValue(type) }
    }
}

/// Arrays, which a keyed container reads from repeated elements.
protocol XMLDecodableList {}

extension Array: XMLDecodableList where Element: Decodable {}
