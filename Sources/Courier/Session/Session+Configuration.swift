public import Foundation
public import HTTPTypes

extension Session {
    /// What a ``Session`` does with every request: where relative requests go, which header
    /// fields they carry, how long they may take, and the middleware they pass through.
    public struct Configuration: Sendable {
        /// The URL that relative requests are resolved against: its scheme, authority and
        /// path prefix. `nil` means every request must be absolute.
        public var baseURL: URL?
        /// Header fields added to every request that does not set them itself.
        public var defaultHeaderFields: HTTPFields
        /// The application's product token that opens the User-Agent, such as `"App/1.2"`.
        public var applicationProduct: String?
        /// The longest a connection may take to establish.
        public var connectTimeout: Duration?
        /// The longest a whole request may take, or `nil` for no limit.
        public var timeout: Duration?
        /// The most redirects followed. Redirects never go from HTTPS to HTTP.
        public var maximumRedirects: Int
        /// The largest response body ``Session/send(_:body:logger:)`` buffers.
        public var maximumResponseBodySize: Int
        /// How many unread bytes a streamed response may hold before the transfer pauses.
        public var streamBufferSize: Int
        /// The middleware, outermost first: the first sees each request first and each
        /// response last.
        public var middlewares: [any Middleware]

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - baseURL: Where relative requests go.
        ///   - defaultHeaderFields: Fields added to every request.
        ///   - applicationProduct: The product token that opens the User-Agent.
        ///   - connectTimeout: The connect timeout (10 seconds by default).
        ///   - timeout: The total timeout per request (60 seconds by default).
        ///   - maximumRedirects: The most redirects followed (5 by default).
        ///   - maximumResponseBodySize: The largest buffered body (128 MiB by default).
        ///   - streamBufferSize: The unread bytes a stream holds before pausing (1 MiB).
        ///   - middlewares: The middleware chain, outermost first.
        public init(
            baseURL: URL? = nil,
            defaultHeaderFields: HTTPFields = [:],
            applicationProduct: String? = nil,
            connectTimeout: Duration? = .seconds(10),
            timeout: Duration? = .seconds(60),
            maximumRedirects: Int = 5,
            maximumResponseBodySize: Int = 128 << 20,
            streamBufferSize: Int = 1 << 20,
            middlewares: [any Middleware] = []
        ) {
            self.baseURL = baseURL
            self.defaultHeaderFields = defaultHeaderFields
            self.applicationProduct = applicationProduct
            self.connectTimeout = connectTimeout
            self.timeout = timeout
            self.maximumRedirects = maximumRedirects
            self.maximumResponseBodySize = maximumResponseBodySize
            self.streamBufferSize = streamBufferSize
            self.middlewares = middlewares
        }

        /// The User-Agent every request carries:
        /// `App/1.2 Courier/0.2.0 (Linux; x86_64) libcurl/7.88.1`.
        public var userAgent: String {
            let sdk =
                "Courier/\(CourierLibrary.version) (\(CourierLibrary.platform)) libcurl/\(CurlTransport.libcurlVersion)"
            guard let applicationProduct, !applicationProduct.isEmpty else { return sdk }
            return "\(applicationProduct) \(sdk)"
        }

        var transferOptions: TransferOptions {
            TransferOptions(
                responseBody: .buffered(maximumBytes: maximumResponseBodySize),
                connectTimeout: connectTimeout,
                timeout: timeout,
                maximumRedirects: maximumRedirects
            )
        }
    }
}
