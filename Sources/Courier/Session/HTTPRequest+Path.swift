public import HTTPTypes

extension HTTPRequest {
    /// Creates a request relative to a session's base URL.
    ///
    /// - Parameters:
    ///   - method: The method.
    ///   - path: The path and query, such as `"/items?page=2"`, resolved against
    ///     ``Session/Configuration/baseURL``.
    ///   - headerFields: The header fields.
    public init(method: Method, path: String, headerFields: HTTPFields = [:]) {
        self.init(method: method, scheme: nil, authority: nil, path: path, headerFields: headerFields)
    }
}
