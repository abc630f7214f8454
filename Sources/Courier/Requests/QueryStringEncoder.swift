/// Flattens a parameter tree into name–value pairs and percent-encodes them.
///
/// The pairs are also the text fields of a multipart body, where nothing is
/// percent-encoded.
struct QueryStringEncoder {
    /// One flattened parameter: its full name and what follows `=`.
    struct Pair: Equatable {
        enum Value: Equatable {
            /// A null: the name alone.
            case none
            /// One value.
            case single(String)
            /// The elements of a comma-separated array.
            case list([String?])
        }

        var name: String
        var value: Value

        /// The value as multipart text: a list joined with commas, a null as empty text.
        var text: String {
            switch value {
            case .none: ""
            case .single(let text): text
            case .list(let elements): elements.map { $0 ?? "" }.joined(separator: ",")
            }
        }
    }

    let format: ResourceRequest.QueryStringFormat

    /// The percent-encoded query string.
    ///
    /// - Throws: ``CourierError/Kind/invalidParameter``.
    func encode(_ parameters: [String: ParameterValue]) throws -> String {
        var output: [UInt8] = []
        output.reserveCapacity(64)
        for (index, pair) in try pairs(parameters).enumerated() {
            if index > 0 { output.append(UInt8(ascii: "&")) }
            PercentEncoding.encode(pair.name, format: format, into: &output)
            switch pair.value {
            case .none:
                break
            case .single(let text):
                output.append(UInt8(ascii: "="))
                PercentEncoding.encode(text, format: format, into: &output)
            case .list(let elements):
                output.append(UInt8(ascii: "="))
                for (position, element) in elements.enumerated() {
                    if position > 0 { output.append(UInt8(ascii: ",")) }
                    PercentEncoding.encode(element ?? "", format: format, into: &output)
                }
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    /// The flattened pairs, unencoded, members in sorted order.
    ///
    /// - Throws: ``CourierError/Kind/invalidParameter``.
    func pairs(_ parameters: [String: ParameterValue]) throws -> [Pair] {
        try ParameterValue.validate(parameters)
        var pairs: [Pair] = []
        for (name, value) in Self.sorted(parameters) {
            try flatten(value, name: name, into: &pairs)
        }
        return pairs
    }

    /// Dictionary members in the order of the UTF-8 bytes of their names.
    static func sorted(_ members: [String: ParameterValue]) -> [(key: String, value: ParameterValue)] {
        members.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
    }

    private func flatten(_ value: ParameterValue, name: String, into pairs: inout [Pair]) throws {
        switch value {
        case .null:
            pairs.append(Pair(name: name, value: .none))
        case .string, .int, .double, .bool:
            pairs.append(Pair(name: name, value: .single(Self.text(value) ?? "")))
        case .dictionary(let members):
            for (member, child) in Self.sorted(members) {
                let childName =
                    switch format.dictionaryFormat {
                    case .subscripted: "\(name)[\(member)]"
                    case .dotNotation: "\(name).\(member)"
                    }
                try flatten(child, name: childName, into: &pairs)
            }
        case .array(let elements):
            try flatten(elements, name: name, into: &pairs)
        }
    }

    private func flatten(_ elements: [ParameterValue], name: String, into pairs: inout [Pair]) throws {
        guard !elements.isEmpty else { return }
        switch format.arrayFormat {
        case .indexed:
            for (index, element) in elements.enumerated() {
                try flatten(element, name: "\(name)[\(index)]", into: &pairs)
            }
        case .bracketed:
            for element in elements { try flatten(element, name: "\(name)[]", into: &pairs) }
        case .commaSeparated:
            try requireScalars(elements, name: name)
            pairs.append(Pair(name: name, value: .list(elements.map(Self.text))))
        case .repeatedKeys:
            try requireScalars(elements, name: name)
            for element in elements { try flatten(element, name: name, into: &pairs) }
        }
    }

    private func requireScalars(_ elements: [ParameterValue], name: String) throws {
        guard elements.allSatisfy(\.isScalar) else {
            throw CourierError(
                kind: .invalidParameter,
                message: "parameter `\(ErrorText.sanitized(name))` holds arrays or dictionaries, which the "
                    + "\(format.arrayFormat.rawValue) array format cannot write; use .indexed"
            )
        }
    }

    /// The text of a scalar; `nil` for null and containers.
    static func text(_ value: ParameterValue) -> String? {
        switch value {
        case .string(let string): string
        case .int(let int): String(int)
        case .double(let double): double.description
        case .bool(let bool): bool ? "true" : "false"
        case .null, .array, .dictionary: nil
        }
    }
}
