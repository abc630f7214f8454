/// The mutable counterpart of ``ResourceRequest``: the same properties, each settable.
///
/// ```swift
/// var draft = MutableResourceRequest(path: "/api/users")
/// draft.headers = ["X-Flags": "1000010"]
/// draft.parameters = ["username": "ada@example.com"]
/// let request = ResourceRequest(draft)
/// ```
///
/// Both are value types; ``ResourceRequest`` is the one that sessions send, so a request
/// cannot change between being checked and being sent.
public struct MutableResourceRequest: Sendable, Hashable {
    /// The relative path or absolute URL; see ``ResourceRequest/path``.
    public var path: String
    /// The method.
    public var method: ResourceRequest.Method
    /// The parameters; see ``ResourceRequest/parameters``.
    public var parameters: [String: ParameterValue]
    /// How parameters are written into a body.
    public var parametersEncoding: ParameterEncoding
    /// How parameters are written into a query or form.
    public var queryStringFormat: QueryStringFormat
    /// The raw body.
    public var body: ResourceBody?
    /// The parts of a multipart body.
    public var multipartData: [MultipartPart]
    /// Additional header fields.
    public var headers: [String: String]

    /// Creates a mutable request with no parameters, body or headers.
    ///
    /// - Parameters:
    ///   - path: The relative path or absolute URL.
    ///   - method: The method, GET by default.
    public init(path: String, method: ResourceRequest.Method = .get) {
        self.init(ResourceRequest(path: path, method: method))
    }

    /// Creates a mutable copy of a request.
    ///
    /// - Parameter request: The request to copy.
    public init(_ request: ResourceRequest) {
        path = request.path
        method = request.method
        parameters = request.parameters
        parametersEncoding = request.parametersEncoding
        queryStringFormat = request.queryStringFormat
        body = request.body
        multipartData = request.multipartData
        headers = request.headers
    }
}
