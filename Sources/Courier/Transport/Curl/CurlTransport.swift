internal import CCurlShim
public import CoreMetrics
public import HTTPTypes

/// The default ``Transport``: libcurl's multi interface, driven by one dedicated thread.
///
/// One multi handle serves every request, so connections are kept alive and reused, and
/// HTTP/2 streams are multiplexed over one TLS connection when the server offers HTTP/2.
/// Easy handles are reused between requests. Only the transport's thread touches curl
/// handles; callers hand work to it and are resumed from it.
///
/// Responses are decoded (gzip, brotli, zstd) transparently. Buffered bodies are pre-sized
/// from `Content-Length` and handed over without copying; streamed bodies pause the
/// transfer while their consumer is behind.
public final class CurlTransport: Transport {
    /// Connection, proxy and trust settings shared by all transfers of a transport.
    public struct Configuration: Sendable {
        /// Which proxy transfers go through.
        public enum Proxy: Sendable, Hashable {
            /// The `http_proxy`, `https_proxy` and `no_proxy` environment variables decide.
            case environment
            /// No proxy, whatever the environment says.
            case none
            /// This proxy, `http://host:port` or `https://host:port`.
            case url(String, excludedHosts: [String] = [])
        }

        /// The most connections to one host (8 by default); `0` means no limit. Further
        /// requests wait for a free connection (or, over HTTP/2, share one).
        ///
        /// Without a limit, a burst of a thousand HTTPS requests on a fresh transport opens
        /// hundreds of TLS connections at once and many time out in the handshake.
        ///
        /// The limit also bounds memory: per allowed connection, at most two transfers (the
        /// one on it and the next) hold a libcurl easy handle at once over HTTP/1, 64 over
        /// HTTP/2 (an HTTPS origin counts as HTTP/2 until it answers); further ones wait in a
        /// queue of their origin, in order, and their time there counts towards their total
        /// timeout.
        public var maximumConnectionsPerHost: Int
        /// The most connections in all; `0` means no limit.
        public var maximumConnections: Int
        /// The proxy to use.
        public var proxy: Proxy
        /// A PEM bundle of the certificate authorities to trust instead of the system's.
        public var trustedCertificateBundlePath: String?
        /// Whether HTTPS may use HTTP/2 when the server offers it.
        public var allowsHTTP2: Bool
        /// The trust policies every connection is checked against.
        ///
        /// With a secured configuration, each TLS connection is checked against the policy
        /// of the host it goes to — the request's host or a redirect's — in the handshake:
        /// pins are matched against the verified chain, a pinned CA bundle replaces
        /// ``trustedCertificateBundlePath``, a system-roots policy needs only a chain that
        /// verifies against it, a host without a policy is refused, and the
        /// TLS minimum is the configuration's. Plain HTTP is refused. ``SecurityConfiguration/unpinned`` (the default) checks
        /// certificates against ``trustedCertificateBundlePath`` or the system's store only.
        ///
        /// This is the trust the transport starts with; ``CurlTransport/replaceTrust(with:)``
        /// changes a running transport's trust, and ``CurlTransport/security`` says which is
        /// in use.
        public var security: SecurityConfiguration
        /// Where the transport's own metrics go — `courier.tls.pin.mismatches` — or `nil` for
        /// the factory the application bootstrapped with `MetricsSystem.bootstrap`.
        public var metricsFactory: (any MetricsFactory)? = nil

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - maximumConnectionsPerHost: The most connections to one host (8 by default).
        ///   - maximumConnections: The most connections in all (no limit by default).
        ///   - proxy: The proxy (the environment decides by default).
        ///   - trustedCertificateBundlePath: A CA bundle to trust instead of the system's.
        ///   - allowsHTTP2: Whether HTTPS may use HTTP/2.
        ///   - security: The trust policies every connection is checked against (none by default).
        public init(
            maximumConnectionsPerHost: Int = 8,
            maximumConnections: Int = 0,
            proxy: Proxy = .environment,
            trustedCertificateBundlePath: String? = nil,
            allowsHTTP2: Bool = true,
            security: SecurityConfiguration = .unpinned
        ) {
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.maximumConnections = maximumConnections
            self.proxy = proxy
            self.trustedCertificateBundlePath = trustedCertificateBundlePath
            self.allowsHTTP2 = allowsHTTP2
            self.security = security
        }
    }

    /// Counts that show what the transport holds right now (for tests; the metrics of a later
    /// version build on them).
    struct Statistics: Sendable, Hashable {
        /// Transfers that hold an easy handle: started, not waiting in a queue, not yet ended.
        var activeTransfers: Int
        /// Transfers waiting for a slot at their origin, without an easy handle yet: per
        /// allowed connection (``Configuration/maximumConnectionsPerHost``), two transfers
        /// hold one at a time over HTTP/1, 64 over HTTP/2.
        var queuedTransfers: Int
        /// Easy handles alive, in use or kept for reuse.
        var easyHandles: Int
    }

    /// The configuration.
    public let configuration: Configuration

    /// The trust new connections are checked against: ``Configuration/security``, or what
    /// ``replaceTrust(with:)`` last put in its place.
    public var security: SecurityConfiguration { loop.trust?.current.security ?? configuration.security }
    let loop: CurlMultiLoop

    /// Creates a transport and starts its thread.
    ///
    /// - Parameter configuration: Connection, proxy and trust settings.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.loop = CurlMultiLoop(configuration: configuration)
    }

    deinit {
        loop.stop()
    }

    /// The version of the libcurl in use, such as `7.88.1`.
    public static let libcurlVersion: String = {
        CurlMultiLoop.globalInit
        guard let version = ccurl_version() else { return "unknown" }
        return String(cString: version)
    }()

    /// What the transport holds right now.
    var statistics: Statistics { loop.statistics }

    /// The transport's thread, offered as a task executor.
    ///
    /// Tasks that prefer this executor run on the transport's thread between two polls, so
    /// handing a request to libcurl and resuming the caller cost no thread hop at all:
    ///
    /// ```swift
    /// try await withTaskExecutorPreference(transport.executor) {
    ///     for _ in 0..<1000 { _ = try await session.send(request) }
    /// }
    /// ```
    ///
    /// ``Session/withTransportExecutor(_:)`` does the same for a session's transport.
    ///
    /// Keep such work short and non-blocking: while it runs, no transfer makes progress, and
    /// blocking the thread until one of the transport's own requests ends deadlocks it.
    public var executor: any TaskExecutor { loop }

    /// Executes one request on the transport's thread.
    ///
    /// - Parameters:
    ///   - request: The absolute request.
    ///   - body: The request body.
    ///   - options: Timeouts, redirects and body delivery.
    ///   - control: Progress and suspend/resume for this transfer.
    /// - Returns: The response.
    /// - Throws: ``CourierError`` or `CancellationError`.
    public func execute(
        _ request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl
    ) async throws -> Response {
        try await transfer(
            request,
            body: body,
            context: MiddlewareContext(
                taskID: NetworkTask.ID(rawValue: 0),
                logger: Session.silentLogger,
                options: options,
                control: control
            )
        )
    }

    /// ``execute(_:body:options:control:)`` with the options and control of `context`, which
    /// the transfer keeps rather than a copy of them (what a session's requests take; see
    /// ``Transport/execute(_:body:context:)``). Inlined into the session's transfer step: one
    /// async frame instead of two, which every request in flight keeps in its task's memory.
    @inline(__always)
    func transfer(_ request: HTTPRequest, body: RequestBody?, context: MiddlewareContext) async throws -> Response {
        let transfer = try CurlTransfer(request: request, body: body, context: context, loop: loop)
        if let trust = loop.trust {
            try await Self.enter(transfer, under: trust)
        }
        if let binding = transfer.options.certificateBinding {
            try check(transfer, bound: binding)
        }
        try await run(transfer)
        return transfer.takeResponse()
    }

    /// Hands a transfer to the loop and waits for its end; cancelling the calling task
    /// cancels it.
    @inline(__always)
    private func run(_ transfer: CurlTransfer) async throws {
        try await withTaskCancellationHandler {
            try await withUnsafeThrowingContinuation { (continuation: UnsafeContinuation<Void, any Error>) in
                transfer.continuation = continuation
                loop.perform(.start(transfer))
            }
        } onCancel: {
            loop.perform(.cancel(transfer))
        }
    }

    /// Gives `transfer` the trust it is sent under, which it keeps to its end. Never inlined, and
    /// it reads the deadline itself: the async frame of ``execute(_:body:options:control:)``,
    /// which every request in flight keeps, holds none of its temporaries.
    @inline(never)
    private static func enter(_ transfer: CurlTransfer, under trust: TransportTrust) async throws {
        transfer.trustGeneration = try await trust.ready(trust.current, deadline: transfer.options.deadline)
    }

    /// Refuses, before anything is sent, a transfer that requires a client certificate its
    /// connection would not present; notes for the response the certificate a transfer that asks
    /// for a report presents.
    ///
    /// The certificate a connection presents is the one of the transfer's trust generation for
    /// the request's host: connections of other generations are never reused for it.
    @inline(never)
    private func check(_ transfer: CurlTransfer, bound binding: CertificateBinding) throws {
        let request = transfer.request
        let authority = request.authority.flatMap { try? Authority($0) }
        let presented = authority.flatMap { authority in
            (transfer.trustGeneration?.compiled).flatMap {
                $0.clientCertificateDigest(
                    forHost: authority.host,
                    port: authority.port(defaultFor: request.scheme ?? "https")
                )
            }
        }
        switch binding {
        case .require(let digest):
            guard presented == digest else {
                throw ClientCertificateMismatch(
                    host: authority?.host ?? request.authority ?? "",
                    presented: presented?.thumbprint
                )
            }
        case .report:
            transfer.presentedCertificateThumbprint = presented?.thumbprint
        }
    }

    /// Fails the transfers in flight with ``CourierError/Kind/shutDown``, frees every curl handle
    /// and stops the thread. Later requests fail with ``CourierError/Kind/shutDown``.
    public func shutdown() async {
        await loop.shutdown()
    }
}
