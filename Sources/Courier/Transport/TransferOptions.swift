/// Per-transfer settings a ``Transport`` honours.
///
/// A ``Session`` fills these from its ``Session/Configuration``; a middleware may change
/// them for one request through ``MiddlewareContext/options``.
public struct TransferOptions: Sendable, Hashable {
    /// How the response body reaches the caller.
    public enum ResponseBodyMode: Sendable, Hashable {
        /// The whole body is collected in memory before the response is returned.
        ///
        /// A body larger than `maximumBytes` fails the transfer with
        /// ``CourierError/Kind/responseTooLarge``.
        case buffered(maximumBytes: Int)
        /// The response returns as soon as the head arrives and the body is delivered in
        /// chunks through ``Response/Body``. When more than `bufferBytes` wait unread, the
        /// transfer pauses until the consumer catches up.
        case streamed(bufferBytes: Int)
    }

    /// How the response body is delivered. Defaults to buffering up to 128 MiB.
    public var responseBody: ResponseBodyMode
    /// The longest a connection may take to establish, or `nil` for the transport's default.
    public var connectTimeout: Duration?
    /// The longest the whole transfer may take, or `nil` for no limit.
    public var timeout: Duration?
    /// The most redirects followed; `0` returns redirect responses to the caller.
    ///
    /// Redirects never go from HTTPS to HTTP.
    public var maximumRedirects: Int
    /// Whether upload and download progress is reported to the ``TransferControl``.
    public var reportsProgress: Bool

    /// Creates transfer options.
    ///
    /// - Parameters:
    ///   - responseBody: How the response body is delivered.
    ///   - connectTimeout: The connect timeout, or `nil` for the transport's default.
    ///   - timeout: The total timeout, or `nil` for none.
    ///   - maximumRedirects: The most redirects to follow.
    ///   - reportsProgress: Whether progress is reported.
    public init(
        responseBody: ResponseBodyMode = .buffered(maximumBytes: 128 << 20),
        connectTimeout: Duration? = .seconds(10),
        timeout: Duration? = .seconds(60),
        maximumRedirects: Int = 5,
        reportsProgress: Bool = false
    ) {
        self.responseBody = responseBody
        self.connectTimeout = connectTimeout
        self.timeout = timeout
        self.maximumRedirects = maximumRedirects
        self.reportsProgress = reportsProgress
    }
}
