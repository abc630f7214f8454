import CourierTesting
import Foundation
import HTTPTypes
import Logging

@testable import Courier

// Test doubles for the auth unit tests: a controllable clock, a scripted grant strategy,
// and a mock transport that reports a secured configuration (it never connects, so it may
// report any; see Transport.security).

/// A clock the test moves by hand.
final class TestClock: Sendable {
    private let current: LockedBox<Date>

    init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) { current = LockedBox(start) }

    var now: Date { current.withLock { $0 } }
    func advance(_ seconds: TimeInterval) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }
    var function: @Sendable () -> Date { { [self] in now } }
}

/// A grant strategy that counts its calls, can be held until released, and answers from a
/// script: tokens `t1`, `t2`, … or a scripted error.
final class ScriptedGrant: GrantStrategy, Sendable {
    private struct State {
        var calls = 0
        var contexts: [GrantContext.Reason] = []
        var gate: CheckedContinuation<Void, Never>?
        var held = false
        var waitingForGate = false
        var errors: [any Error] = []
        var cancelledObserved = 0
    }

    private let state = LockedBox(State())
    let lifetime: TimeInterval
    let clock: TestClock
    let refreshTokens: Bool

    init(clock: TestClock, lifetime: TimeInterval = 3600, refreshTokens: Bool = true) {
        self.clock = clock
        self.lifetime = lifetime
        self.refreshTokens = refreshTokens
    }

    var calls: Int { state.withLock { $0.calls } }
    var reasons: [GrantContext.Reason] { state.withLock { $0.contexts } }
    var cancellationsObserved: Int { state.withLock { $0.cancelledObserved } }

    /// The next calls wait in `obtainToken` until `release()`.
    func hold() { state.withLock { $0.held = true } }

    /// Lets a held call finish.
    func release() {
        let gate = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.held = false
            defer { state.gate = nil }
            return state.gate
        }
        gate?.resume()
    }

    /// Whether a call is waiting at the gate.
    var isWaitingAtGate: Bool { state.withLock { $0.gate != nil } }

    /// The next call fails with `error`.
    func failNext(with error: any Error) { state.withLock { $0.errors.append(error) } }

    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        let (number, held) = state.withLock { state -> (Int, Bool) in
            state.calls += 1
            state.contexts.append(context.reason)
            return (state.calls, state.held)
        }
        if held {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    guard state.held else { return true }
                    state.gate = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        }
        if Task.isCancelled { state.withLock { $0.cancelledObserved += 1 } }
        if let error = state.withLock({ $0.errors.isEmpty ? nil : $0.errors.removeFirst() }) { throw error }
        let now = clock.now
        return OAuth2Token(
            accessToken: "t\(number)",
            issuedAt: now,
            expiresAt: now.addingTimeInterval(lifetime),
            refreshToken: refreshTokens ? "r\(number)" : nil,
            scope: [.read]
        )
    }
}

enum AuthFixtures {
    static let authHost = "auth.example.test"
    static let apiHost = "api.example.test"
    static let server = AuthorizationServer(baseURL: URL(string: "https://\(authHost)")!)
    static let client = OAuth2ClientCredentials(clientID: "client-1", clientSecret: "s3cret")

    /// A secured configuration that trusts the two fixture hosts (the pins are never checked:
    /// the mock transport does not connect).
    static let security: SecurityConfiguration = {
        let pin = try! SPKIPin(sha256: [UInt8](repeating: 7, count: 32))
        return try! SecurityConfiguration.secured(trust: [
            try! TrustPolicy(host: authHost, pins: [pin]), try! TrustPolicy(host: apiHost, pins: [pin]),
        ])
    }()

    /// A token endpoint over a mock transport.
    static func endpoint(
        client: OAuth2ClientCredentials = client,
        responder: @escaping MockTransport.Responder = { _, _ in
            Response(head: HTTPResponse(status: .internalServerError))
        }
    ) -> (TokenEndpoint, MockTransport) {
        let transport = MockTransport(security: AuthFixtures.security, responder: responder)
        let endpoint = TokenEndpoint(server: server, client: client, transport: transport)
        return (endpoint, transport)
    }

    /// A broker with a scripted grant and a test clock.
    static func broker(
        grant: ScriptedGrant,
        clock: TestClock,
        level: AuthorizationLevel = .user,
        store: any TokenStore = InMemoryTokenStore(),
        configuration: TokenBroker.Configuration = .init(
            leeway: .seconds(30),
            refreshLimit: .init(maximumRefreshes: 1000, window: .seconds(30))
        )
    ) -> TokenBroker {
        TokenBroker(
            level: level,
            endpoint: endpoint().0,
            strategy: grant,
            store: store,
            configuration: configuration,
            logger: nil,
            now: clock.function
        )
    }

    static func json(_ status: HTTPResponse.Status, _ body: String, headers: HTTPFields = [:]) -> Response {
        var fields = headers
        fields[.contentType] = "application/json"
        return Response(head: HTTPResponse(status: status, headerFields: fields), body: Response.Body(Data(body.utf8)))
    }

    /// The form fields of a recorded request body.
    static func form(_ body: Data?) -> [String: String] {
        guard let body, let text = String(data: body, encoding: .utf8) else { return [:] }
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            fields[parts[0]] = parts.count > 1 ? parts[1] : ""
        }
        return fields
    }
}

extension Result where Failure == any Error {
    /// The outcome of an async throwing closure.
    init(awaiting body: () async throws -> Success) async {
        do {
            self = .success(try await body())
        } catch {
            self = .failure(error)
        }
    }
}
