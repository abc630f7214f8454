public import HTTPTypes

/// When and how a ``Session`` sends a request again after it failed or was answered with a
/// status that asks for it.
///
/// Every session retries with ``Session/Configuration/retryPolicy`` (``default``); a
/// ``ResourceRequest/retryPolicy`` replaces it for one request.
///
/// ```swift
/// var configuration = Session.Configuration(baseURL: URL(string: "https://api.example.com")!)
/// configuration.retryPolicy.maximumAttempts = 5
/// configuration.retryPolicy.retriedStatuses.insert(.internalServerError)
///
/// var upload = ResourceRequest(path: "/api/reports", method: .post, body: .data(report))
/// upload.retryPolicy = .never
/// ```
///
/// ### What is retried
///
/// - Methods: the idempotent ones (GET, HEAD, OPTIONS, TRACE, PUT, DELETE). POST, PATCH and
///   other methods only when the request carries an `Idempotency-Key` header field, which the
///   caller supplies: the server then recognises a repeated request.
/// - Failures: connections that could not be made or that timed out while connecting
///   (``CourierError/Kind/couldNotConnect``, ``CourierError/Kind/connectTimedOut``), and a
///   connection that closed (``CourierError/Kind/connectionClosed``) or a deadline that
///   passed (``CourierError/Kind/timedOut``) before any byte of a response arrived. A host
///   name that does not resolve, TLS and security failures, a response cut short, and every
///   refusal of bad input are not retried.
/// - If you bring a retry middleware of your own, set ``Session/Configuration/retryPolicy``
///   to ``never``: the two would multiply each other's attempts.
/// - Responses with a status in ``retriedStatuses`` (429, 502, 503, 504 by default).
///
/// Never retried: a body that can be sent only once (``RequestBody/isReplayable`` is `false`),
/// a request whose deadline would pass during the wait (``ResourceRequest/deadline`` or
/// ``Session/Configuration/timeout``: one deadline for every attempt), a request whose task is
/// cancelled (cancellation ends the wait at once), and a response whose `Retry-After` asks for
/// more than ``maximumRetryAfter``: the caller gets that response.
///
/// ### How long between attempts
///
/// A `Retry-After` field in a retried response, in either form (seconds or an HTTP-date), is
/// the wait. Otherwise the wait is random between zero and
/// `min(maximumBackoff, baseBackoff × 2^(retry − 1))` ("full jitter"), so clients that failed
/// together do not come back together.
///
/// ### The retry budget
///
/// Each session keeps a budget so that a failing backend does not see its load multiplied:
/// over the last 10 seconds, retries may number at most ``retryBudgetRatio`` of the requests
/// that went through the session, plus ``minimumRetriesPerSecond`` per second of that window.
/// A retry the budget does not allow is not made: the caller gets the last response or error.
/// With the defaults, 1,000 requests to a backend that answers 503 to everything reach it at
/// most 1,000 × 1.2 + 100 times.
///
/// Each attempt is visible: ``MiddlewareContext/attempt`` counts it for the middleware after
/// the retry step, the request's logger gets a `debug` line per retry (why, which attempt, the
/// wait), and ``Response/attempts`` and ``CourierError/attempts`` tell the caller how often the
/// request was sent.
public struct RetryPolicy: Sendable, Hashable {
    /// How often a request may be sent in all, the first attempt included (3 by default);
    /// `1` never retries.
    public var maximumAttempts: Int {
        get { storage.values.maximumAttempts }
        set { update { $0.maximumAttempts = newValue } }
    }
    /// The backoff ceiling of the first retry, doubled for each further one (100 ms by default).
    public var baseBackoff: Duration {
        get { storage.values.baseBackoff }
        set { update { $0.baseBackoff = newValue } }
    }
    /// The largest backoff ceiling (10 seconds by default).
    public var maximumBackoff: Duration {
        get { storage.values.maximumBackoff }
        set { update { $0.maximumBackoff = newValue } }
    }
    /// The statuses that are retried: 429 Too Many Requests, 502 Bad Gateway, 503 Service
    /// Unavailable and 504 Gateway Timeout by default.
    public var retriedStatuses: Set<HTTPResponse.Status> {
        get { storage.values.retriedStatuses }
        set { update { $0.retriedStatuses = newValue } }
    }
    /// The longest `Retry-After` that is waited for (30 seconds by default). A response that
    /// asks for more is returned to the caller without a retry.
    public var maximumRetryAfter: Duration {
        get { storage.values.maximumRetryAfter }
        set { update { $0.maximumRetryAfter = newValue } }
    }
    /// The share of recent requests that may be retried, from the session's budget (0.2 by
    /// default: one retry per five requests).
    public var retryBudgetRatio: Double {
        get { storage.values.retryBudgetRatio }
        set { update { $0.retryBudgetRatio = newValue } }
    }
    /// The retries per second the budget allows however few requests there were (10 by
    /// default), so that a quiet session can still retry.
    public var minimumRetriesPerSecond: Int {
        get { storage.values.minimumRetriesPerSecond }
        set { update { $0.minimumRetriesPerSecond = newValue } }
    }

    /// Courier's default: 3 attempts, backoff from 100 ms to at most 10 s with full jitter,
    /// 429/502/503/504 retried, `Retry-After` up to 30 s, a budget of 20 % of recent requests
    /// plus 10 retries a second.
    public static let `default` = RetryPolicy()

    /// No retries: every request is sent once.
    public static let never = RetryPolicy(maximumAttempts: 1)

    /// Creates a policy.
    ///
    /// - Parameters:
    ///   - maximumAttempts: How often a request may be sent in all (3).
    ///   - baseBackoff: The backoff ceiling of the first retry (100 ms).
    ///   - maximumBackoff: The largest backoff ceiling (10 s).
    ///   - retriedStatuses: The statuses that are retried (429, 502, 503, 504).
    ///   - maximumRetryAfter: The longest `Retry-After` waited for (30 s).
    ///   - retryBudgetRatio: The share of recent requests that may be retried (0.2).
    ///   - minimumRetriesPerSecond: The retries per second always allowed (10).
    public init(
        maximumAttempts: Int = 3,
        baseBackoff: Duration = .milliseconds(100),
        maximumBackoff: Duration = .seconds(10),
        retriedStatuses: Set<HTTPResponse.Status> = [
            .tooManyRequests, .badGateway, .serviceUnavailable, .gatewayTimeout,
        ],
        maximumRetryAfter: Duration = .seconds(30),
        retryBudgetRatio: Double = 0.2,
        minimumRetriesPerSecond: Int = 10
    ) {
        storage = Storage(
            Values(
                maximumAttempts: maximumAttempts,
                baseBackoff: baseBackoff,
                maximumBackoff: maximumBackoff,
                retriedStatuses: retriedStatuses,
                maximumRetryAfter: maximumRetryAfter,
                retryBudgetRatio: retryBudgetRatio,
                minimumRetriesPerSecond: minimumRetriesPerSecond
            )
        )
    }

    /// Policies are equal when all their settings are.
    public static func == (lhs: RetryPolicy, rhs: RetryPolicy) -> Bool {
        lhs.storage === rhs.storage || lhs.storage.values == rhs.storage.values
    }

    /// Hashes every setting.
    public func hash(into hasher: inout Hasher) { hasher.combine(storage.values) }

    // The settings live in one shared box: a policy is one word in every middleware context
    // and request that carries one.
    private var storage: Storage

    private final class Storage: Sendable {
        let values: Values
        /// The lowest and highest retried status codes: most responses are outside, and
        /// need no look-up in the set.
        let retriedCodes: ClosedRange<Int>

        init(_ values: Values) {
            self.values = values
            let codes = values.retriedStatuses.map(\.code)
            retriedCodes = (codes.min() ?? 1)...(codes.max() ?? 0)
        }
    }

    /// Whether responses with `status` are retried.
    func retries(_ status: HTTPResponse.Status) -> Bool {
        storage.retriedCodes.contains(status.code) && storage.values.retriedStatuses.contains(status)
    }

    private struct Values: Sendable, Hashable {
        var maximumAttempts: Int
        var baseBackoff: Duration
        var maximumBackoff: Duration
        var retriedStatuses: Set<HTTPResponse.Status>
        var maximumRetryAfter: Duration
        var retryBudgetRatio: Double
        var minimumRetriesPerSecond: Int
    }

    private mutating func update(_ change: (inout Values) -> Void) {
        var values = storage.values
        change(&values)
        storage = Storage(values)
    }
}
