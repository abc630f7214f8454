/// A value that a layer above the core records on a ``CourierError`` — which kind of request
/// failed, say — and how the error shows it in its ``CourierError/description`` and
/// ``CourierError/parameters``.
///
/// The core keeps such values without knowing their types. An error holds at most one value
/// of each type; the layer that defines the type declares the public property that reads it
/// (in an extension of `CourierError`) and records it where it learns it.
protocol ErrorAttribute: Sendable {
    /// Where values of this type come among an error's attributes, lowest first: the order of
    /// the description's context and notes.
    static var order: Int { get }
    /// The value's key in ``CourierError/parameters``.
    static var parameterName: String { get }
    /// The value in ``CourierError/parameters``: plain text that never holds a secret.
    var parameterValue: String { get }
    /// How ``CourierError/description`` shows the value.
    var descriptionText: ErrorAttributeText { get }
    /// Records the value on `error`: by default in place of the error's value of this type.
    ///
    /// - Parameter error: The error.
    func record(on error: inout CourierError)
}

extension ErrorAttribute {
    /// Records the value in place of the error's value of this type.
    ///
    /// - Parameter error: The error.
    func record(on error: inout CourierError) {
        error[attribute: Self.self] = self
    }
}

/// Where ``CourierError/description`` shows an ``ErrorAttribute``.
enum ErrorAttributeText: Sendable {
    /// In the parentheses after the kind, before the endpoint:
    /// `CourierError.timedOut (authenticated request, GET /items)`.
    case context(String)
    /// In brackets after the message: `CourierError.grantRejected: … [invalid_grant]`.
    case note(String)
}
