import Foundation
import HTTPTypes

/// The request fields a stored response was selected by (its `Vary` field, RFC 9111 §4.1),
/// with the values the request that produced it had.
///
/// A later request matches when each named field has the same value, compared after joining
/// the field's lines with `, ` and trimming whitespace around each value; an absent field
/// matches only an absent one. `Vary: *` matches no request.
struct Variance: Sendable, Hashable {
    /// The lower-cased names with the values, absent as `nil`; `nil` for `Vary: *`.
    private let values: [FieldValue]?

    /// A field named by `Vary` and its normalised value.
    private struct FieldValue: Sendable, Hashable {
        let name: String
        let value: String?
    }

    /// The variance of a response with `response` fields to a request with `request` fields.
    init(response: HTTPFields, request: HTTPFields) {
        var names: [String] = []
        for line in response[values: .vary] {
            for item in line.split(separator: ",") {
                let name = item.trimmingCharacters(in: .whitespaces).lowercased()
                if !name.isEmpty, !names.contains(name) { names.append(name) }
            }
        }
        if names.contains("*") {
            values = nil
            return
        }
        values = names.sorted().map { FieldValue(name: $0, value: Self.normalised($0, in: request)) }
    }

    /// Whether a request with `fields` selects the response.
    func matches(_ fields: HTTPFields) -> Bool {
        guard let values else { return false }
        return values.allSatisfy { Self.normalised($0.name, in: fields) == $0.value }
    }

    /// Whether it names no field, so that every request matches.
    var isEmpty: Bool { values?.isEmpty ?? false }

    /// The value of the field `name` in `fields`: its lines joined with `, `, each value trimmed;
    /// `nil` when it is absent or the name is not a field name.
    private static func normalised(_ name: String, in fields: HTTPFields) -> String? {
        guard let fieldName = HTTPField.Name(name) else { return nil }
        let lines = fields[values: fieldName]
        guard !lines.isEmpty else { return nil }
        return lines.flatMap { $0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) } }
            .joined(separator: ", ")
    }
}
