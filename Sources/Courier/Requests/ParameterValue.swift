/// A request parameter: a scalar, null, or an array or dictionary of parameters.
///
/// Parameters are a typed tree rather than `[String: Any]`, so a value that neither JSON nor
/// a query string can carry is a compile-time error, and the only run-time failure left,
/// a non-finite `Double`, is a ``CourierError/Kind/invalidParameter`` before anything is sent.
/// Literals build the tree:
///
/// ```swift
/// let parameters: [String: ParameterValue] = [
///     "query": "fuzzy kittens",
///     "page": 2,
///     "filters": ["colour": ["grey", "white"], "indoor": true],
///     "cursor": nil,
/// ]
/// ```
///
/// Two values holding NaN are never equal, as for `Double`.
public enum ParameterValue: Sendable, Hashable {
    /// A string.
    case string(String)
    /// An integer.
    case int(Int)
    /// A floating-point number; NaN and the infinities cannot be encoded.
    case double(Double)
    /// A Boolean, written `true` or `false`.
    case bool(Bool)
    /// JSON `null`; in a query string, the name without `=`.
    case null
    /// An ordered list.
    case array([ParameterValue])
    /// Named values; encoders write the names in sorted order.
    case dictionary([String: ParameterValue])

    /// Whether the value is a string, number, Boolean or null.
    public var isScalar: Bool {
        switch self {
        case .array, .dictionary: false
        case .string, .int, .double, .bool, .null: true
        }
    }

    /// Throws for the first value that cannot be encoded.
    ///
    /// - Parameter path: The name of this value, for the error message.
    /// - Throws: ``CourierError/Kind/invalidParameter`` for NaN, an infinity or an empty name.
    func validate(path: String) throws {
        switch self {
        case .double(let number) where !number.isFinite:
            throw CourierError(
                kind: .invalidParameter,
                message:
                    "parameter `\(ErrorText.sanitized(path))` is \(number), which neither JSON nor a query string can carry"
            )
        case .array(let elements):
            for (index, element) in elements.enumerated() { try element.validate(path: "\(path)[\(index)]") }
        case .dictionary(let members):
            try Self.validate(members, prefix: path)
        case .string, .int, .double, .bool, .null:
            break
        }
    }

    /// Throws for the first member of `parameters` that cannot be encoded.
    ///
    /// - Throws: ``CourierError/Kind/invalidParameter``.
    static func validate(_ parameters: [String: ParameterValue], prefix: String? = nil) throws {
        for (name, value) in parameters {
            let path = prefix.map { "\($0).\(name)" } ?? name
            guard !name.isEmpty else {
                throw CourierError(
                    kind: .invalidParameter,
                    message: "parameter `\(ErrorText.sanitized(path))` has an empty name"
                )
            }
            try value.validate(path: path)
        }
    }
}

extension ParameterValue: ExpressibleByStringLiteral {
    /// Creates a string value.
    public init(stringLiteral value: String) { self = .string(value) }
}

extension ParameterValue: ExpressibleByIntegerLiteral {
    /// Creates an integer value.
    public init(integerLiteral value: Int) { self = .int(value) }
}

extension ParameterValue: ExpressibleByFloatLiteral {
    /// Creates a floating-point value.
    public init(floatLiteral value: Double) { self = .double(value) }
}

extension ParameterValue: ExpressibleByBooleanLiteral {
    /// Creates a Boolean value.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}

extension ParameterValue: ExpressibleByNilLiteral {
    /// Creates ``null``.
    public init(nilLiteral: ()) { self = .null }
}

extension ParameterValue: ExpressibleByArrayLiteral {
    /// Creates an array value.
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
}

extension ParameterValue: ExpressibleByDictionaryLiteral {
    /// Creates a dictionary value; a name given twice keeps its last value.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
}
