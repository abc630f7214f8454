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
    public var connectTimeout: Duration? {
        get { connectTimeoutStorage.present }
        set { connectTimeoutStorage = .storing(newValue) }
    }
    /// When the response must be there, or `nil` for no limit: its whole body when buffered,
    /// its head when streamed (a streamed body is bounded by ``stallTimeout`` instead, so a
    /// long download is not cut off while it moves). A transfer past it fails with
    /// ``CourierError/Kind/timedOut``.
    public var deadline: ContinuousClock.Instant? {
        get {
            // Not `map(ContinuousClock.reference.advanced(by:))`: a method reference is a closure
            // whose context an async caller allocates from its task.
            guard let offset = deadlineOffset.present else { return nil }
            return ContinuousClock.reference.advanced(by: offset)
        }
        set { deadlineOffset = .storing(newValue.map(ContinuousClock.reference.duration(to:))) }
    }
    /// The longest the transfer may go without moving a byte in either direction once the
    /// response head has arrived (and, before it, while the request body goes out), or `nil`
    /// for no limit; a paused stream (its consumer is behind) or a suspended transfer does not
    /// count as stalled. A transfer that stalls fails with
    /// ``CourierError/Kind/stalled``.
    public var stallTimeout: Duration? {
        get { stallTimeoutStorage.present }
        set { stallTimeoutStorage = .storing(newValue) }
    }
    /// The most redirects followed; `0` returns redirect responses to the caller.
    ///
    /// Redirects never go from HTTPS to HTTP.
    public var maximumRedirects: Int

    /// The client certificate a certificate-bound token requires of the connection, or a
    /// request to report the one presented; `nil` for neither (the rule).
    var certificateBinding: CertificateBinding?

    /// The optional durations, each in the 16 bytes of a `Duration` (an optional one takes 17,
    /// and 32 with its padding): the options are copied into the async frames of every
    /// request in flight, and into its ``MiddlewareContext`` and transfer.
    private var connectTimeoutStorage: OptionalDuration
    private var stallTimeoutStorage: OptionalDuration
    /// ``deadline`` as its distance from `ContinuousClock.reference`, which keeps the layout of
    /// these options, and of the ``MiddlewareContext`` and async frames holding them, fixed.
    private var deadlineOffset: OptionalDuration

    /// Whether upload and download progress is reported to the ``TransferControl``.
    public var reportsProgress: Bool

    /// Creates transfer options.
    ///
    /// - Parameters:
    ///   - responseBody: How the response body is delivered.
    ///   - connectTimeout: The connect timeout, or `nil` for the transport's default.
    ///   - deadline: When the response must be there, or `nil` for no limit.
    ///   - stallTimeout: The longest the transfer may move no byte (30 seconds by default).
    ///   - maximumRedirects: The most redirects to follow.
    ///   - reportsProgress: Whether progress is reported.
    public init(
        responseBody: ResponseBodyMode = .buffered(maximumBytes: 128 << 20),
        connectTimeout: Duration? = .seconds(10),
        deadline: ContinuousClock.Instant? = nil,
        stallTimeout: Duration? = .seconds(30),
        maximumRedirects: Int = 5,
        reportsProgress: Bool = false
    ) {
        self.responseBody = responseBody
        self.connectTimeoutStorage = .storing(connectTimeout)
        self.deadlineOffset = .storing(deadline.map(ContinuousClock.reference.duration(to:)))
        self.stallTimeoutStorage = .storing(stallTimeout)
        self.maximumRedirects = maximumRedirects
        self.reportsProgress = reportsProgress
    }
}

/// A `Duration` or none, in a `Duration`'s 16 bytes: none is the one duration no timeout or
/// deadline is (the most negative whole number of seconds, about −292 billion years).
private struct OptionalDuration: Sendable, Hashable {
    private static var none: Duration { Duration(secondsComponent: .min, attosecondsComponent: 0) }
    private let value: Duration

    private init(value: Duration) { self.value = value }

    /// Keeps `duration`; `nil`, and a duration equal to the marker of none, as none.
    static func storing(_ duration: Duration?) -> OptionalDuration {
        OptionalDuration(value: duration ?? none)
    }

    /// The duration kept, or `nil`.
    var present: Duration? { value == Self.none ? nil : value }
}
