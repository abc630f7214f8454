import Testing

@testable import Courier

/// Property: decoding what the encoder wrote gives back the input (with every leaf as the
/// string a query carries), for random parameter trees under every format.
@Suite struct RequestsQueryRoundTripTests {
    static let formats: [ResourceRequest.QueryStringFormat] = ResourceRequest.QueryStringFormat.DictionaryFormat
        .allCases.flatMap { dictionary in
            ResourceRequest.QueryStringFormat.ArrayFormat.allCases.flatMap { array in
                ResourceRequest.QueryStringFormat.SpaceEncoding.allCases.flatMap { space in
                    ResourceRequest.QueryStringFormat.PlusEncoding.allCases.map { plus in
                        ResourceRequest.QueryStringFormat(
                            dictionaryFormat: dictionary,
                            arrayFormat: array,
                            spaceEncoding: space,
                            plusEncoding: plus
                        )
                    }
                }
            }
        }

    static let seed: UInt64 = 0x00C0_FFEE_2026

    @Test(arguments: formats)
    func decodingWhatWeEncodeGivesTheInput(_ format: ResourceRequest.QueryStringFormat) throws {
        var generator = SeededGenerator(seed: Self.seed &+ UInt64(Self.formats.firstIndex(of: format)!))
        var trees = TreeGenerator(format: format)
        for iteration in 0..<300 {
            let input = trees.parameters(using: &generator)
            let query = try format.encode(input)
            let decoded = QueryStringTestDecoder.decode(query, format: format)
            let expected = input.mapValues(TreeGenerator.asQueryText)
            #expect(decoded == expected, "iteration \(iteration), seed \(Self.seed): \(query)")
            if decoded != expected { break }
        }
    }

    @Test func generatorIsReproducible() {
        var first = SeededGenerator(seed: 42)
        var second = SeededGenerator(seed: 42)
        var trees = TreeGenerator(format: ResourceRequest.QueryStringFormat())
        #expect(trees.parameters(using: &first) == trees.parameters(using: &second))
    }
}

/// Random parameter trees that a query string in `format` can carry without ambiguity.
struct TreeGenerator {
    let format: ResourceRequest.QueryStringFormat

    /// Letters, digits, and characters that need escaping; never `[`, `]` or `.`, which
    /// name structure, and never `+` when both spaces and plus signs are written as `+`.
    var alphabet: [Character] {
        var characters = Array("abcXYZ019 -_~é🙂&=?/#%,;:@!'*()\"<>\\^`{|}+")
        if format.spaceEncoding == .plus && format.plusEncoding == .literal { characters.removeAll { $0 == "+" } }
        return characters
    }

    mutating func parameters(using generator: inout some RandomNumberGenerator) -> [String: ParameterValue] {
        var parameters: [String: ParameterValue] = [:]
        for _ in 0..<Int.random(in: 1...5, using: &generator) {
            parameters[name(using: &generator)] = value(depth: 0, using: &generator)
        }
        return parameters
    }

    private func name(using generator: inout some RandomNumberGenerator) -> String {
        let letters = Array("abcdefghXYZ")
        var name = String(letters.randomElement(using: &generator)!)
        for _ in 0..<Int.random(in: 0...6, using: &generator) {
            name.append(alphabet.randomElement(using: &generator)!)
        }
        return name
    }

    private func text(using generator: inout some RandomNumberGenerator) -> String {
        String((0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
    }

    private func scalar(allowNull: Bool, using generator: inout some RandomNumberGenerator) -> ParameterValue {
        switch Int.random(in: 0..<(allowNull ? 6 : 5), using: &generator) {
        case 0: .int(Int.random(in: -1_000_000...1_000_000, using: &generator))
        case 1: .double(Double.random(in: -1e6...1e6, using: &generator))
        case 2: .bool(Bool.random(using: &generator))
        case 5: .null
        default: .string(text(using: &generator))
        }
    }

    private func value(depth: Int, using generator: inout some RandomNumberGenerator) -> ParameterValue {
        let nests = depth < 3
        switch Int.random(in: 0..<(nests ? 5 : 3), using: &generator) {
        case 3:
            var members: [String: ParameterValue] = [:]
            for _ in 0..<Int.random(in: 1...3, using: &generator) {
                members[name(using: &generator)] = value(depth: depth + 1, using: &generator)
            }
            return .dictionary(members)
        case 4:
            switch format.arrayFormat {
            case .indexed:
                return .array(
                    (0..<Int.random(in: 1...3, using: &generator)).map { _ in value(depth: depth + 1, using: &generator)
                    }
                )
            case .bracketed, .repeatedKeys, .commaSeparated:
                let allowNull = format.arrayFormat != .commaSeparated
                return .array(
                    (0..<Int.random(in: 2...4, using: &generator)).map { _ in
                        scalar(allowNull: allowNull, using: &generator)
                    }
                )
            }
        default:
            return scalar(allowNull: true, using: &generator)
        }
    }

    /// The value as a query carries it: every scalar as its text.
    static func asQueryText(_ value: ParameterValue) -> ParameterValue {
        switch value {
        case .null: .null
        case .string(let string): .string(string)
        case .int(let int): .string(String(int))
        case .double(let double): .string(double.description)
        case .bool(let bool): .string(bool ? "true" : "false")
        case .array(let elements): .array(elements.map(asQueryText))
        case .dictionary(let members): .dictionary(members.mapValues(asQueryText))
        }
    }
}
