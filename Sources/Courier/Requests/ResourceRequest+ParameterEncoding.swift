extension ResourceRequest {
    /// How a request's parameters are written into its body (every method but GET, HEAD, DELETE, OPTIONS and TRACE).
    ///
    /// Parameters of GET, HEAD, DELETE, OPTIONS and TRACE requests always go in the query string, whatever
    /// the encoding; a multipart request sends them as text fields.
    public enum ParameterEncoding: String, Sendable, Hashable, CaseIterable {
        /// A JSON object with sorted keys, `Content-Type: application/json`. The default.
        case json
        /// `application/x-www-form-urlencoded`, formatted by the request's
        /// ``ResourceRequest/QueryStringFormat``.
        case formURLEncoded
    }
}
