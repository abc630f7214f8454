/// An error names the level whose token was involved: `level user` in its description,
/// `level` in its parameters.
extension AuthorizationLevel: ErrorAttribute {
    /// After the kind of request.
    static var order: Int { 1 }
    /// `level`.
    static var parameterName: String { "level" }
    /// The level's name.
    var parameterValue: String { rawValue }
    /// `level <name>`, among the context.
    var descriptionText: ErrorAttributeText { .context("level \(self)") }
}
