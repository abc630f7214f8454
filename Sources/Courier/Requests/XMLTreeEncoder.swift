import Foundation

/// Encodes an `Encodable` value as an XML document.
///
/// The mapping: the value is the root element; each property is a child element named by
/// its key; an array property repeats that element once per element (`<tag>a</tag><tag>b</tag>`,
/// as XMLCoder does), so an empty array writes nothing; an array that is not a property
/// (the root value, an array inside an array, or a custom `nestedUnkeyedContainer`) holds
/// `<item>` children; a scalar is the text of its element (`true`/`false`, numbers in Swift's
/// shortest form); a `nil` optional is left out. No attributes are written.
struct XMLTreeEncoder {
    /// The name of each array element.
    static let itemName = "item"

    /// The document, with an XML declaration and no indentation.
    ///
    /// - Throws: ``XMLCodingError`` for an invalid element name or text XML cannot hold,
    ///   `EncodingError` for a non-finite number.
    func encode(_ value: some Encodable, rootElement: String) throws -> Data {
        let root = XMLTreeElement(name: rootElement)
        try XMLElementEncoder(element: root, codingPath: []).encodeValue(value)
        var output = #"<?xml version="1.0" encoding="UTF-8"?>"#
        try root.write(into: &output)
        return Data(output.utf8)
    }
}

/// An `Encoder` that writes into one element.
struct XMLElementEncoder: Encoder {
    let element: XMLTreeElement
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(KeyedContainer<Key>(encoder: self))
    }

    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        UnkeyedContainer(encoder: self)
    }

    func singleValueContainer() -> any SingleValueEncodingContainer {
        SingleValueContainer(encoder: self)
    }

    /// Writes a scalar as text, anything else through its `encode(to:)`.
    func encodeValue(_ value: some Encodable) throws {
        if let text = try scalarText(value) {
            element.text = text
        } else {
            try value.encode(to: self)
        }
    }

    /// A new child element and its encoder.
    func child(named name: String, key: any CodingKey) -> XMLElementEncoder {
        let child = XMLTreeElement(name: name)
        element.children.append(child)
        return XMLElementEncoder(element: child, codingPath: codingPath + [key])
    }

    private func scalarText(_ value: any Encodable) throws -> String? {
        switch value {
        case let string as String: return string
        case let bool as Bool: return bool ? "true" : "false"
        case let double as Double:
            guard double.isFinite else { throw nonFinite(double) }
            return double.description
        case let float as Float:
            guard float.isFinite else { throw nonFinite(float) }
            return float.description
        case let integer as any BinaryInteger: return "\(integer)"
        case let decimal as Decimal: return decimal.description
        case let url as URL: return url.absoluteString
        default: return nil
        }
    }

    private func nonFinite(_ value: Any) -> EncodingError {
        EncodingError.invalidValue(value, .init(codingPath: codingPath, debugDescription: "XML cannot carry \(value)"))
    }

    private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let encoder: XMLElementEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil(forKey key: Key) throws {}

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if let list = value as? any XMLEncodableList {
                for element in list.xmlElements {
                    try encoder.child(named: key.stringValue, key: key).encodeValue(element)
                }
            } else {
                try encoder.child(named: key.stringValue, key: key).encodeValue(value)
            }
        }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type,
            forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            encoder.child(named: key.stringValue, key: key).container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            encoder.child(named: key.stringValue, key: key).unkeyedContainer()
        }

        mutating func superEncoder() -> any Encoder {
            encoder.child(named: "super", key: AnyKey("super"))
        }

        mutating func superEncoder(forKey key: Key) -> any Encoder {
            encoder.child(named: key.stringValue, key: key)
        }
    }

    private struct UnkeyedContainer: UnkeyedEncodingContainer {
        let encoder: XMLElementEncoder
        private(set) var count = 0
        var codingPath: [any CodingKey] { encoder.codingPath }

        init(encoder: XMLElementEncoder) {
            self.encoder = encoder
        }

        private mutating func nextItem() -> XMLElementEncoder {
            defer { count += 1 }
            return encoder.child(named: XMLTreeEncoder.itemName, key: AnyKey(intValue: count))
        }

        mutating func encodeNil() throws { _ = nextItem() }

        mutating func encode<T: Encodable>(_ value: T) throws { try nextItem().encodeValue(value) }

        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            nextItem().container(keyedBy: keyType)
        }

        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { nextItem().unkeyedContainer() }

        mutating func superEncoder() -> any Encoder { nextItem() }
    }

    private struct SingleValueContainer: SingleValueEncodingContainer {
        let encoder: XMLElementEncoder
        var codingPath: [any CodingKey] { encoder.codingPath }

        mutating func encodeNil() throws {}

        mutating func encode<T: Encodable>(_ value: T) throws { try encoder.encodeValue(value) }
    }
}

/// Arrays, which a keyed container writes as repeated elements.
protocol XMLEncodableList {
    var xmlElements: [any Encodable] { get }
}

extension Array: XMLEncodableList where Element: Encodable {
    var xmlElements: [any Encodable] { self }
}
