/// Builds a ``ResourceRequest`` one property at a time, by chaining.
///
/// ```swift
/// let request = ResourceRequestBuilder()
///     .method(.post)
///     .path("/api/users")
///     .parameter("name", "Ada")
///     .header("X-Flags", "1000010")
///     .build()
/// ```
///
/// Each call returns a changed copy, so a partly built builder can be shared and reused.
/// `build()` does not validate: ``ResourceRequest/makeHTTPRequest()`` does, when the request
/// is sent.
public struct ResourceRequestBuilder: Sendable, Hashable {
    private var draft: MutableResourceRequest

    /// Creates a builder for a GET request; set the path with ``path(_:)``.
    public init() {
        draft = MutableResourceRequest(path: "")
    }

    /// Creates a builder that starts from an existing request.
    ///
    /// - Parameter request: The request to start from.
    public init(_ request: ResourceRequest) {
        draft = MutableResourceRequest(request)
    }

    /// Sets the path.
    ///
    /// - Parameter path: The relative path or absolute URL.
    /// - Returns: The changed builder.
    public func path(_ path: String) -> Self { with { $0.path = path } }

    /// Sets the method.
    ///
    /// - Parameter method: The method.
    /// - Returns: The changed builder.
    public func method(_ method: ResourceRequest.Method) -> Self { with { $0.method = method } }

    /// Replaces all parameters.
    ///
    /// - Parameter parameters: The parameters.
    /// - Returns: The changed builder.
    public func parameters(_ parameters: [String: ParameterValue]) -> Self { with { $0.parameters = parameters } }

    /// Sets one parameter.
    ///
    /// - Parameters:
    ///   - name: The parameter's name.
    ///   - value: Its value.
    /// - Returns: The changed builder.
    public func parameter(_ name: String, _ value: ParameterValue) -> Self { with { $0.parameters[name] = value } }

    /// Sets how parameters are written into a body.
    ///
    /// - Parameter encoding: The encoding.
    /// - Returns: The changed builder.
    public func parametersEncoding(_ encoding: ParameterEncoding) -> Self { with { $0.parametersEncoding = encoding } }

    /// Sets how parameters are written into a query or form.
    ///
    /// - Parameter format: The format.
    /// - Returns: The changed builder.
    public func queryStringFormat(_ format: QueryStringFormat) -> Self { with { $0.queryStringFormat = format } }

    /// Sets the raw body.
    ///
    /// - Parameter body: The body, or `nil` for none.
    /// - Returns: The changed builder.
    public func body(_ body: ResourceBody?) -> Self { with { $0.body = body } }

    /// Replaces the multipart parts.
    ///
    /// - Parameter parts: The parts.
    /// - Returns: The changed builder.
    public func multipartData(_ parts: [MultipartPart]) -> Self { with { $0.multipartData = parts } }

    /// Appends one multipart part.
    ///
    /// - Parameter part: The part.
    /// - Returns: The changed builder.
    public func part(_ part: MultipartPart) -> Self { with { $0.multipartData.append(part) } }

    /// Replaces all headers.
    ///
    /// - Parameter headers: The header fields.
    /// - Returns: The changed builder.
    public func headers(_ headers: [String: String]) -> Self { with { $0.headers = headers } }

    /// Sets one header.
    ///
    /// - Parameters:
    ///   - name: The field name.
    ///   - value: The field value.
    /// - Returns: The changed builder.
    public func header(_ name: String, _ value: String) -> Self { with { $0.headers[name] = value } }

    /// The request.
    ///
    /// - Returns: A request equal to one made with ``ResourceRequest/init(path:method:parameters:parametersEncoding:queryStringFormat:body:multipartData:headers:)``
    ///   from the same values.
    public func build() -> ResourceRequest { ResourceRequest(draft) }

    private func with(_ change: (inout MutableResourceRequest) -> Void) -> Self {
        var copy = self
        change(&copy.draft)
        return copy
    }
}
