/// A value that a layer above the core attaches to one request for its own middleware — whose
/// token the request carries, say — kept in ``RequestAttributes`` under its type.
///
/// The core carries such values without knowing their types: the layer that defines one
/// conforms it, sets it where it sends the request, and reads it back in its middleware from
/// ``MiddlewareContext/attributes``.
protocol RequestAttribute: Sendable {}

/// The values that the layers above the core attach to one request, at most one of each type.
///
/// Cheap per request: the first value is kept inline (a value of up to three words sits in the
/// existential's own buffer), so a request with one attribute or none allocates nothing for
/// them; only a second value takes an array.
struct RequestAttributes: Sendable {
    /// The first value set.
    private var first: (any Sendable)?
    /// The values set after the first: empty, and so unallocated, on most requests.
    private var others: [any Sendable] = []

    /// No values.
    init() {}

    /// One value.
    ///
    /// - Parameter value: The value.
    init(_ value: some RequestAttribute) {
        first = value
    }

    /// The value of type `type`, or `nil` when none is set; setting `nil` removes it.
    subscript<Value: RequestAttribute>(_ type: Value.Type) -> Value? {
        get {
            if let value = first as? Value { return value }
            for value in others {
                if let value = value as? Value { return value }
            }
            return nil
        }
        set {
            if let current = first, current is Value {
                first = newValue
                return
            }
            others.removeAll { $0 is Value }
            guard let newValue else { return }
            if first == nil { first = newValue } else { others.append(newValue) }
        }
    }
}
