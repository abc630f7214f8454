public import HTTPTypes

/// What a ``ResponseFilter`` decides about a response.
public enum ResponseFilterDecision: Sendable {
    /// Hand the response to the caller.
    case deliver
    /// Send the request again, with these header fields added or replaced — a session
    /// cookie, say, that the filter just obtained.
    case restart(setting: HTTPFields)

    /// Send the request again unchanged.
    public static let restart = ResponseFilterDecision.restart(setting: [:])
}

/// Looks at responses and may ask for the request to be restarted: the shape of SAML-style
/// sign-in, where a response reveals that a session is
/// missing, the filter obtains one, and the original request is sent again.
///
/// ```swift
/// struct SAMLSessionFilter: ResponseFilter {
///     let identityProvider: IdentityProviderClient
///     func decide(about response: Response, for request: HTTPRequest) async throws -> ResponseFilterDecision {
///         guard response.headerFields[HTTPField.Name("X-Login-Required")!] != nil else { return .deliver }
///         let cookie = try await identityProvider.signIn()
///         return .restart(setting: [.cookie: cookie])
///     }
/// }
/// ```
public protocol ResponseFilter: Sendable {
    /// Decides about one response.
    ///
    /// - Parameters:
    ///   - response: The response.
    ///   - request: The request as it was sent, without its `Authorization` field.
    /// - Returns: Deliver, or restart.
    /// - Throws: Any error; it reaches the caller.
    func decide(about response: Response, for request: HTTPRequest) async throws -> ResponseFilterDecision
}

/// Runs a ``ResponseFilter`` and restarts requests it asks to restart, a bounded number of
/// times.
///
/// Fields the filter sets that carry credentials (`Authorization`, `Cookie`, anything
/// ``Redaction/isSensitive(_:)`` matches) go only where tokens may go: HTTPS to trusted
/// hosts. A body that cannot be replayed is never resent: its response is delivered. A
/// filter that asks for more restarts than allowed gets ``CourierError/Kind/challengeFailed``.
struct ResponseFilterMiddleware: Middleware {
    let filter: any ResponseFilter
    let maximumRestarts: Int
    let policy: any CredentialPolicy

    init(filter: any ResponseFilter, maximumRestarts: Int = 1, policy: any CredentialPolicy) {
        self.filter = filter
        self.maximumRestarts = max(0, maximumRestarts)
        self.policy = policy
    }

    /// Sends the request and lets the filter decide, restarting at most
    /// `maximumRestarts` times.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        var current = request
        var attempt = context
        var restarts = 0
        while true {
            let response = try await next(current, body, attempt)
            var shown = current
            shown.headerFields[.authorization] = nil
            shown.headerFields[.dpop] = nil
            guard case .restart(let fields) = try await filter.decide(about: response, for: shown) else {
                return response
            }
            guard body?.isReplayable ?? true else { return response }
            guard restarts < maximumRestarts else {
                throw CourierError(
                    kind: .challengeFailed,
                    message:
                        "the response filter asked for restart \(restarts + 1); at most \(maximumRestarts) allowed",
                    statusCode: response.status.code
                )
            }
            if fields.contains(where: { Redaction.isSensitive($0.name) }) {
                try policy.checkCredentialTarget(current)
            }
            for field in fields { current.headerFields[field.name] = field.value }
            restarts += 1
            attempt.attempt += 1
        }
    }
}
