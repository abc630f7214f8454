/// An error shows the authorization server's error response after its message, and names its
/// code in its parameters as `oauth_error`.
extension OAuth2Error: ErrorAttribute {
    /// After the kind of request and the level.
    static var order: Int { 2 }
    /// `oauth_error`.
    static var parameterName: String { "oauth_error" }
    /// The `error` code: the server's text, so at most 64 characters of it.
    var parameterValue: String { ErrorText.sanitized(code.rawValue) }
    /// The whole response, `code: description (uri)`, in brackets after the message.
    var descriptionText: ErrorAttributeText { .note(description) }
}
