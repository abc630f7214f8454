/// A value that a layer above the core attaches to one request for its own middleware — whose
/// token the request carries, say — kept in ``RequestAttributes`` under its type.
///
/// The core carries such values without knowing their types: the layer that defines one
/// conforms it, sets it where it sends the request, and reads it back in its middleware from
/// ``MiddlewareContext/attributes``.
protocol RequestAttribute: Sendable {}

/// The values that the layers above the core attach to one request, at most one of each type.
///
/// Cheap per request: the values are one optional existential, four words. A request with no
/// attribute copies and frees nothing for them, and one with a single attribute of up to three
/// words (the user's credential is two) keeps it in the existential's own buffer, unallocated;
/// only a second value takes an array.
struct RequestAttributes: Sendable {
    /// Several values, kept as one: an array is one word, so it too sits in the existential.
    private struct Several: Sendable {
        var values: [any Sendable]
    }

    /// Nothing, the one value set, or ``Several``.
    private var storage: (any Sendable)?

    /// No values.
    init() {}

    /// One value.
    ///
    /// - Parameter value: The value.
    init(_ value: some RequestAttribute) {
        storage = value
    }

    /// The value of type `type`, or `nil` when none is set; setting `nil` removes it.
    subscript<Value: RequestAttribute>(_ type: Value.Type) -> Value? {
        get {
            guard let storage else { return nil }
            if let value = storage as? Value { return value }
            guard let several = storage as? Several else { return nil }
            for value in several.values {
                if let value = value as? Value { return value }
            }
            return nil
        }
        set {
            var values: [any Sendable]
            switch storage {
            case nil: values = []
            case let several as Several: values = several.values
            case let value?: values = [value]
            }
            values.removeAll { $0 is Value }
            if let newValue { values.append(newValue) }
            switch values.count {
            case 0: storage = nil
            case 1: storage = values[0]
            default: storage = Several(values: values)
            }
        }
    }
}
