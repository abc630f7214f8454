public import HTTPTypes

/// A request for a resource: path, method, parameters, body or multipart data, and header fields.
///
/// A resource request is a value: build it with the initializer, change a copy through its
/// properties, and send it. The method and header fields are swift-http-types' own
/// `HTTPRequest.Method` and `HTTPFields`, and ``makeHTTPRequest()`` produces the
/// `HTTPRequest` a ``Session`` sends, so there is one model of a request throughout Courier.
///
/// ```swift
/// var request = ResourceRequest(path: "/api/users", parameters: ["name": "Ada", "page": 2])
/// request.headerFields[.accept] = "application/json"
/// let response = try await session.send(request).validate()
/// let users = try response.decode([User].self)
/// ```
///
/// ### Where parameters go
///
/// - GET, HEAD, DELETE, OPTIONS and TRACE: in the query string, formatted by
///   ``queryStringFormat`` and appended to any query already in ``path``.
/// - Every other method (POST, PUT, PATCH, and custom methods such as `PROPFIND`): in the body,
///   as JSON (the default) or form URL-encoded (``parametersEncoding``); with
///   ``multipartData``, as text fields before the parts.
/// - A raw ``body`` replaces the parameters in the body: they are not sent.
///
/// ### What Courier refuses
///
/// ``makeHTTPRequest()`` checks everything before a byte is sent and throws ``CourierError``:
/// an invalid path (``CourierError/Kind/invalidURL``), a header field Courier owns
/// (User-Agent, Authorization, Host, Content-Length, Transfer-Encoding:
/// ``CourierError/Kind/reservedHeader``), a NaN parameter, a body on GET or HEAD, a file that
/// does not exist.
public struct ResourceRequest: Sendable, Hashable {
    /// The path, relative to ``Session/Configuration/baseURL`` (`"/api/users"` or
    /// `"api/users"`), or an absolute `http`/`https` URL. It may hold a query; it must be
    /// percent-encoded and must not hold a fragment or credentials.
    public var path: String
    /// The method: any method, including custom ones.
    public var method: HTTPRequest.Method
    /// The parameters; see "Where parameters go".
    public var parameters: [String: ParameterValue]
    /// How parameters are written into a body.
    public var parametersEncoding: ResourceRequest.ParameterEncoding
    /// How parameters are written into a query string or a form body.
    public var queryStringFormat: ResourceRequest.QueryStringFormat
    /// The raw body; it replaces parameters in the body.
    public var body: Body?
    /// The parts of a `multipart/form-data` body; empty for none.
    public var multipartData: [MultipartPart]
    /// Additional header fields. Courier owns User-Agent, Authorization, Host,
    /// Content-Length and Transfer-Encoding; a request that sets one is refused.
    public var headerFields: HTTPFields
    /// When the response must be there — every attempt, wait and redirect included — or
    /// `nil` for the session's ``Session/Configuration/timeout`` from when it is sent. A
    /// service passes on the deadline of the work it does:
    /// `request.deadline = .now + .seconds(2)`.
    public var deadline: ContinuousClock.Instant?
    /// When this request is sent again after a failure or a status such as 503, or `nil`
    /// for the session's ``Session/Configuration/retryPolicy``. A POST or PATCH is retried
    /// only with an `Idempotency-Key` in ``headerFields``.
    public var retryPolicy: RetryPolicy?

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
    ///   - headerFields: Additional header fields.
    ///   - deadline: When the response must be there; `nil` for the session's timeout.
    public init(
        path: String,
        method: HTTPRequest.Method = .get,
        parameters: [String: ParameterValue] = [:],
        parametersEncoding: ResourceRequest.ParameterEncoding = .json,
        queryStringFormat: ResourceRequest.QueryStringFormat = ResourceRequest.QueryStringFormat(),
        body: Body? = nil,
        multipartData: [MultipartPart] = [],
        headerFields: HTTPFields = [:],
        deadline: ContinuousClock.Instant? = nil
    ) {
        self.path = path
        self.method = method
        self.parameters = parameters
        self.parametersEncoding = parametersEncoding
        self.queryStringFormat = queryStringFormat
        self.body = body
        self.multipartData = multipartData
        self.headerFields = headerFields
        self.deadline = deadline
        self.retryPolicy = nil
    }

    /// The method and the path without query, for errors, logs and analytics.
    var endpoint: ResponseEndpoint {
        ResponseEndpoint(method: method, target: path)
    }
}

extension HTTPRequest.Method {
    /// Whether a resource request sends its parameters in the body rather than the query:
    /// every method but GET, HEAD, DELETE, OPTIONS and TRACE.
    var sendsParametersInBody: Bool {
        switch self {
        case .get, .head, .delete, .options, .trace: false
        default: true
        }
    }

    /// Whether a request with this method may carry a body at all (not GET, HEAD or TRACE).
    var allowsBody: Bool { self != .get && self != .head && self != .trace }
}
