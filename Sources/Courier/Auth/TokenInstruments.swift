import CoreMetrics
import Tracing

/// The metrics and tracer of one ``TokenBroker``: renewals, failed renewals and the time
/// callers wait for a token, per authorization level, and a span per token request.
struct TokenInstruments: Sendable {
    /// `courier.auth.token_renewals`: tokens renewed from the authorization server.
    static let renewalsLabel = "courier.auth.token_renewals"
    /// `courier.auth.token_renewal_failures`: renewals that failed.
    static let failuresLabel = "courier.auth.token_renewal_failures"
    /// `courier.auth.token_wait.duration`: how long a request waited for a token it did not
    /// find ready (a load, a grant or a renewal), in seconds.
    static let waitLabel = "courier.auth.token_wait.duration"
    /// The dimension that names the level.
    static let levelDimension = "courier.authorization.level"

    let renewals: Counter?
    let failures: Counter?
    let wait: Timer?
    let tracer: (any Tracer)?
    let level: AuthorizationLevel

    /// The instruments of the session a broker sends its token requests through, or `nil`
    /// when it has neither metrics nor tracing.
    init?(session: Session, level: AuthorizationLevel) {
        let configuration = session.configuration
        let factory = RequestInstruments.metricsFactory(of: configuration)
        let tracer = configuration.tracer ?? InstrumentationSystem.tracer
        let tracing = tracer is NoOpTracer ? nil : tracer
        guard factory != nil || tracing != nil else { return nil }
        let dimensions = [(Self.levelDimension, level.rawValue)]
        renewals = factory.map { Counter(label: Self.renewalsLabel, dimensions: dimensions, factory: $0) }
        failures = factory.map { Counter(label: Self.failuresLabel, dimensions: dimensions, factory: $0) }
        wait = factory.map {
            Timer(label: Self.waitLabel, dimensions: dimensions, preferredDisplayUnit: .seconds, factory: $0)
        }
        self.tracer = tracing
        self.level = level
    }

    /// Runs `operation`, a request to the token endpoint, in a span named after `reason`:
    /// `token grant` for a first token, `token renewal` for one that replaces another.
    func span<Value: Sendable>(
        reason: GrantContext.Reason,
        isolation: isolated (any Actor)? = #isolation,
        _ operation: () async throws -> Value
    ) async throws -> Value {
        guard let tracer else { return try await operation() }
        // A grant obtains a first token (sign-in, or none yet); a renewal replaces one.
        let name = reason == .requested || reason == .noToken ? "token grant" : "token renewal"
        let span = tracer.startSpan(name, context: ServiceContext.current ?? .topLevel, ofKind: .internal)
        span.attributes[Self.levelDimension] = level.rawValue
        span.attributes["courier.token.reason"] = reason.rawValue
        do {
            let result = try await ServiceContext.withValue(span.context) { try await operation() }
            span.end()
            return result
        } catch {
            span.end(failingWith: error)
            throw error
        }
    }

    /// Counts a renewal.
    func recordRenewal() { renewals?.increment() }

    /// Counts a failed renewal.
    func recordFailure() { failures?.increment() }

    /// Records a wait for a token that began at `start`.
    func recordWait(since start: ContinuousClock.Instant) {
        guard let wait else { return }
        let elapsed = (ContinuousClock.now - start).components
        wait.recordNanoseconds(elapsed.seconds * 1_000_000_000 + elapsed.attoseconds / 1_000_000_000)
    }
}
