/// A request for a resource: path, method, parameters, body or multipart data, and headers.
///
/// A resource request is an immutable value. Build it with this initializer, change a copy
/// through ``MutableResourceRequest``, or chain a ``ResourceRequestBuilder``: all three make
/// the same value, and equal values send the same request (only a multipart boundary is
/// drawn anew for each translation).
///
/// ```swift
/// let request = ResourceRequest(path: "/api/users", parameters: ["name": "Ada", "page": 2])
/// let response = try await session.send(request).validate()
/// let users = try response.decode([User].self)
/// ```
///
/// ### Where parameters go
///
/// - GET, HEAD and DELETE: in the query string, formatted by ``queryStringFormat`` and
///   appended to any query already in ``path``.
/// - POST, PUT and PATCH: in the body, as JSON (the default) or form URL-encoded
///   (``parametersEncoding``); with ``multipartData``, as text fields before the parts.
/// - A raw ``body`` replaces the parameters of a POST, PUT or PATCH: they are not sent.
///
/// ### What Courier refuses
///
/// ``makeHTTPRequest()`` checks everything before a byte is sent and throws
/// ``RequestError``: an invalid path, a header with CR, LF or NUL, a header Courier owns
/// (User-Agent, Authorization, Host, Content-Length, Transfer-Encoding), a NaN parameter,
/// a body on GET or HEAD, a file that does not exist.
public struct ResourceRequest: Sendable, Hashable {
    /// The path, relative to ``Session/Configuration/baseURL`` (`"/api/users"` or
    /// `"api/users"`), or an absolute `http`/`https` URL. It may hold a query; it must be
    /// percent-encoded and must not hold a fragment or credentials.
    public let path: String
    /// The method.
    public let method: Method
    /// The parameters; see "Where parameters go".
    public let parameters: [String: ParameterValue]
    /// How parameters are written into a POST, PUT or PATCH body.
    public let parametersEncoding: ParameterEncoding
    /// How parameters are written into a query string or a form body.
    public let queryStringFormat: QueryStringFormat
    /// The raw body; it replaces parameters in the body.
    public let body: ResourceBody?
    /// The parts of a `multipart/form-data` body; empty for none.
    public let multipartData: [MultipartPart]
    /// Additional header fields. Courier owns User-Agent, Authorization, Host,
    /// Content-Length and Transfer-Encoding; a request that sets one is refused.
    public let headers: [String: String]

    /// Creates a request.
    ///
    /// - Parameters:
    ///   - path: The relative path or absolute URL.
    ///   - method: The method, GET by default.
    ///   - parameters: The parameters.
    ///   - parametersEncoding: How parameters are written into a body, JSON by default.
    ///   - queryStringFormat: How parameters are written into a query or form.
    ///   - body: The raw body.
    ///   - multipartData: The parts of a multipart body.
    ///   - headers: Additional header fields.
    public init(
        path: String,
        method: Method = .get,
        parameters: [String: ParameterValue] = [:],
        parametersEncoding: ParameterEncoding = .json,
        queryStringFormat: QueryStringFormat = QueryStringFormat(),
        body: ResourceBody? = nil,
        multipartData: [MultipartPart] = [],
        headers: [String: String] = [:]
    ) {
        self.path = path
        self.method = method
        self.parameters = parameters
        self.parametersEncoding = parametersEncoding
        self.queryStringFormat = queryStringFormat
        self.body = body
        self.multipartData = multipartData
        self.headers = headers
    }

    /// Creates a request with the current values of a mutable request.
    ///
    /// - Parameter request: The mutable request.
    public init(_ request: MutableResourceRequest) {
        self.init(
            path: request.path,
            method: request.method,
            parameters: request.parameters,
            parametersEncoding: request.parametersEncoding,
            queryStringFormat: request.queryStringFormat,
            body: request.body,
            multipartData: request.multipartData,
            headers: request.headers
        )
    }

    /// The method and the path without query, for errors, logs and analytics.
    public var endpoint: ResourceEndpoint {
        ResourceEndpoint(method: method, target: path)
    }
}
