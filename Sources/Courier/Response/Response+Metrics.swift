public import Foundation

extension Response {
    /// Timings and facts about one completed transfer, as the transport measured them.
    ///
    /// Durations are measured from the start of the transfer, as libcurl's `CURLINFO_*_TIME_T`
    /// values are: ``connect`` includes ``nameLookup``, and so on. After redirects, the timings
    /// and byte counts are those of the last transfer, the one that answered.
    public struct Metrics: Sendable, Hashable {
        /// The HTTP version a response was received with.
        public enum HTTPVersion: String, Sendable, Hashable {
            /// HTTP/1.0.
            case http1_0 = "HTTP/1.0"
            /// HTTP/1.1.
            case http1_1 = "HTTP/1.1"
            /// HTTP/2.
            case http2 = "HTTP/2"
            /// HTTP/3.
            case http3 = "HTTP/3"
            /// The version was not reported.
            case unknown = "unknown"
        }

        /// Until the host name was resolved.
        public var nameLookup: Duration
        /// Until the TCP connection was established.
        public var connect: Duration
        /// Until the TLS handshake completed (zero for plain HTTP).
        public var tlsHandshake: Duration
        /// Until the first response byte arrived.
        public var timeToFirstByte: Duration
        /// The whole transfer.
        public var total: Duration
        /// Request body bytes sent.
        public var bytesSent: Int64
        /// Response body bytes received (after decoding).
        public var bytesReceived: Int64
        /// The HTTP version used.
        public var httpVersion: HTTPVersion
        /// Whether the transfer used a connection that an earlier transfer opened.
        public var isConnectionReused: Bool
        /// How many redirects were followed.
        public var redirectCount: Int
        /// Where each followed redirect led, in order; the last URL is the one that answered.
        /// Empty when the request was not redirected.
        public var redirectChain: [URL]

        /// Creates metrics.
        public init(
            nameLookup: Duration = .zero,
            connect: Duration = .zero,
            tlsHandshake: Duration = .zero,
            timeToFirstByte: Duration = .zero,
            total: Duration = .zero,
            bytesSent: Int64 = 0,
            bytesReceived: Int64 = 0,
            httpVersion: HTTPVersion = .unknown,
            isConnectionReused: Bool = false,
            redirectCount: Int = 0,
            redirectChain: [URL] = []
        ) {
            self.nameLookup = nameLookup
            self.connect = connect
            self.tlsHandshake = tlsHandshake
            self.timeToFirstByte = timeToFirstByte
            self.total = total
            self.bytesSent = bytesSent
            self.bytesReceived = bytesReceived
            self.httpVersion = httpVersion
            self.isConnectionReused = isConnectionReused
            self.redirectCount = redirectCount
            self.redirectChain = redirectChain
        }
    }
}
