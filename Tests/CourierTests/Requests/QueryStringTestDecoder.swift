@testable import Courier

/// Reads a query string written by `ResourceRequest.QueryStringFormat` back into a parameter tree whose
/// leaves are strings (a query carries no types), for the round-trip property tests.
///
/// It reads what the generator in `RequestsQueryRoundTripTests` produces: names without
/// `[`, `]` or `.`, dictionary names that do not start with a digit, arrays of at least two
/// scalars outside the indexed format.
enum QueryStringTestDecoder {
    private indirect enum Node {
        case leaf(ParameterValue)
        case object([String: Node])
        case list([Int: Node])

        var value: ParameterValue {
            switch self {
            case .leaf(let value): value
            case .object(let members): .dictionary(members.mapValues(\.value))
            case .list(let elements): .array(elements.keys.sorted().map { elements[$0]!.value })
            }
        }
    }

    private enum Segment {
        case key(String)
        case index(Int)
        case append
    }

    static func decode(_ query: String, format: ResourceRequest.QueryStringFormat) -> [String: ParameterValue] {
        var root: [String: Node] = [:]
        var repeated: [String: [ParameterValue]] = [:]
        var order: [String] = []
        guard !query.isEmpty else { return [:] }
        for pair in query.split(separator: "&", omittingEmptySubsequences: false) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = percentDecode(parts[0], format: format)
            let value: ParameterValue
            if parts.count == 1 {
                value = .null
            } else if format.arrayFormat == .commaSeparated && parts[1].contains(",") {
                value = .array(
                    parts[1].split(separator: ",", omittingEmptySubsequences: false).map {
                        .string(percentDecode($0, format: format))
                    }
                )
            } else {
                value = .string(percentDecode(parts[1], format: format))
            }
            if repeated[name] == nil { order.append(name) }
            repeated[name, default: []].append(value)
        }
        for name in order {
            let values = repeated[name]!
            let segments = parse(name, format: format)
            if segments.last.map({ if case .append = $0 { true } else { false } }) == true {
                let base = Array(segments.dropLast())
                for (offset, value) in values.enumerated() {
                    insert(value, at: base + [.index(offset)], into: &root)
                }
            } else if values.count > 1 {
                insert(.array(values), at: segments, into: &root)
            } else {
                insert(values[0], at: segments, into: &root)
            }
        }
        return root.mapValues(\.value)
    }

    private static func parse(_ name: String, format: ResourceRequest.QueryStringFormat) -> [Segment] {
        var segments: [Segment] = []
        var current = ""
        var index = name.startIndex
        func flush() {
            if !current.isEmpty || segments.isEmpty { segments.append(.key(current)) }
            current = ""
        }
        while index < name.endIndex {
            let character = name[index]
            if character == "[" {
                flush()
                let close = name[index...].firstIndex(of: "]")!
                let inside = String(name[name.index(after: index)..<close])
                if inside.isEmpty {
                    segments.append(.append)
                } else if let number = Int(inside), inside.first!.isNumber {
                    segments.append(.index(number))
                } else {
                    segments.append(.key(inside))
                }
                index = name.index(after: close)
                current = ""
                continue
            }
            if character == "." && format.dictionaryFormat == .dotNotation {
                flush()
            } else {
                current.append(character)
            }
            index = name.index(after: index)
        }
        if !current.isEmpty { segments.append(.key(current)) }
        return segments
    }

    private static func insert(_ value: ParameterValue, at segments: [Segment], into root: inout [String: Node]) {
        guard case .key(let first) = segments[0] else { return }
        var node = root[first]
        insert(value, at: segments.dropFirst(), into: &node)
        root[first] = node
    }

    private static func insert(_ value: ParameterValue, at segments: ArraySlice<Segment>, into node: inout Node?) {
        guard let segment = segments.first else {
            node = .leaf(value)
            return
        }
        switch segment {
        case .key(let key):
            var members: [String: Node] = [:]
            if case .object(let existing)? = node { members = existing }
            var child = members[key]
            insert(value, at: segments.dropFirst(), into: &child)
            members[key] = child
            node = .object(members)
        case .index(let position):
            var elements: [Int: Node] = [:]
            if case .list(let existing)? = node { elements = existing }
            var child = elements[position]
            insert(value, at: segments.dropFirst(), into: &child)
            elements[position] = child
            node = .list(elements)
        case .append:
            break
        }
    }

    /// Percent-decodes; `+` is a space when the format writes spaces as `+`.
    static func percentDecode(_ text: Substring, format: ResourceRequest.QueryStringFormat) -> String {
        var bytes: [UInt8] = []
        var iterator = Array(text.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "%"), let high = iterator.next(), let low = iterator.next() {
                bytes.append(UInt8(String(decoding: [high, low], as: UTF8.self), radix: 16)!)
            } else if byte == UInt8(ascii: "+") && format.spaceEncoding == .plus {
                bytes.append(UInt8(ascii: " "))
            } else {
                bytes.append(byte)
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// SplitMix64: a small, seeded, reproducible random number generator.
struct SeededGenerator: RandomNumberGenerator {
    private var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}
