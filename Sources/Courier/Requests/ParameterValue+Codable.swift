public import Foundation

extension ParameterValue: Codable {
    /// Decodes any JSON value: `null`, a Boolean, an integer, a number, a string, an array or
    /// an object.
    ///
    /// - Parameter decoder: The decoder.
    /// - Throws: `DecodingError` when the value is none of these.
    public init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            var elements: [ParameterValue] = []
            while !array.isAtEnd { elements.append(try array.decode(ParameterValue.self)) }
            self = .array(elements)
            return
        }
        if let object = try? decoder.container(keyedBy: AnyKey.self) {
            var members: [String: ParameterValue] = [:]
            for key in object.allKeys { members[key.stringValue] = try object.decode(ParameterValue.self, forKey: key) }
            self = .dictionary(members)
            return
        }
        let value = try decoder.singleValueContainer()
        if value.decodeNil() {
            self = .null
        } else if let bool = try? value.decode(Bool.self) {
            self = .bool(bool)
        } else if let int = try? value.decode(Int.self) {
            self = .int(int)
        } else if let double = try? value.decode(Double.self) {
            self = .double(double)
        } else {
            self = .string(try value.decode(String.self))
        }
    }

    /// Encodes the value as the matching JSON value.
    ///
    /// - Parameter encoder: The encoder.
    /// - Throws: `EncodingError` for NaN or an infinity.
    public func encode(to encoder: any Encoder) throws {
        switch self {
        case .string(let string):
            var container = encoder.singleValueContainer()
            try container.encode(string)
        case .int(let int):
            var container = encoder.singleValueContainer()
            try container.encode(int)
        case .double(let double):
            var container = encoder.singleValueContainer()
            try container.encode(double)
        case .bool(let bool):
            var container = encoder.singleValueContainer()
            try container.encode(bool)
        case .null:
            var container = encoder.singleValueContainer()
            try container.encodeNil()
        case .array(let elements):
            var container = encoder.unkeyedContainer()
            for element in elements { try container.encode(element) }
        case .dictionary(let members):
            var container = encoder.container(keyedBy: AnyKey.self)
            for (name, value) in members { try container.encode(value, forKey: AnyKey(name)) }
        }
    }

    /// Creates a parameter tree from any `Encodable` value, through its JSON form.
    ///
    /// Use it to pass a model as parameters:
    /// `ResourceRequest(path: "/search", parameters: try ParameterValue(encoding: query).members)`.
    ///
    /// - Parameters:
    ///   - value: The value.
    ///   - encoder: The JSON encoder, for its key and date strategies.
    /// - Throws: ``CourierError/Kind/invalidParameter`` when the value cannot be encoded as JSON.
    public init(encoding value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws {
        do {
            let data = try encoder.encode(value)
            self = try JSONDecoder().decode(ParameterValue.self, from: data)
        } catch {
            throw CourierError(kind: .invalidParameter, message: "the value cannot be encoded as parameters: \(error)")
        }
    }

    /// The members of a dictionary value; empty for any other value.
    public var members: [String: ParameterValue] {
        if case .dictionary(let members) = self { return members }
        return [:]
    }

    /// The JSON object for `parameters`, keys sorted.
    ///
    /// - Throws: ``CourierError/Kind/invalidParameter`` for a value JSON cannot carry.
    static func jsonData(_ parameters: [String: ParameterValue]) throws -> Data {
        try validate(parameters)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        do {
            return try encoder.encode(parameters)
        } catch {
            throw CourierError(kind: .invalidParameter, message: "the parameters cannot be encoded as JSON: \(error)")
        }
    }
}

/// A coding key for any string.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        stringValue = string
        intValue = nil
    }

    init(stringValue: String) { self.init(stringValue) }

    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}
