import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The bearer, challenge and response-filter middleware on a secured session over a mock transport.
@Suite(.timeLimit(.minutes(1)))
struct AuthMiddlewareTests {
    static let invalidToken: HTTPFields = [.wwwAuthenticate: #"Bearer realm="courier", error="invalid_token""#]

    func session(_ middlewares: [any Middleware], transport: MockTransport) -> Session {
        let configuration = Session.Configuration(
            baseURL: URL(string: "https://\(AuthFixtures.apiHost)")!,
            middlewares: middlewares
        )
        return Session(configuration: configuration, transport: transport)  // secured: the transport's security
    }

    /// A resource server that accepts only the tokens in `valid`.
    static func resourceServer(valid: Set<String>) -> MockTransport {
        MockTransport(security: AuthFixtures.security) { request, _ in
            let token = request.headerFields[.authorization].map { String($0.dropFirst("Bearer ".count)) }
            guard let token, valid.contains(token) else {
                return Response(head: HTTPResponse(status: .unauthorized, headerFields: invalidToken))
            }
            return Response(head: HTTPResponse(status: .ok), body: Response.Body(Data(token.utf8)))
        }
    }

    @Test func theTokenIsAttachedAsBearer() async throws {
        let clock = TestClock()
        let broker = AuthFixtures.broker(grant: ScriptedGrant(clock: clock), clock: clock, level: .device)
        let transport = Self.resourceServer(valid: ["t1"])
        let session = session(
            [BearerTokenMiddleware(broker: broker, policy: AuthFixtures.security)],
            transport: transport
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/api/device/info"))
        #expect(response.status == .ok)
        #expect(transport.requests.map { $0.request.headerFields[.authorization] } == ["Bearer t1"])
    }

    @Test func a401RenewsOnceAndResendsOnce() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        let transport = Self.resourceServer(valid: ["t2"])
        let session = session(
            [BearerTokenMiddleware(broker: broker, policy: AuthFixtures.security)],
            transport: transport
        )
        let response = try await session.send(HTTPRequest(method: .post, path: "/api/echo"), body: .string("{}"))
        #expect(response.status == .ok)
        #expect(String(decoding: response.data, as: UTF8.self) == "t2")
        #expect(transport.requests.map { $0.request.headerFields[.authorization] } == ["Bearer t1", "Bearer t2"])
        #expect(transport.requests.map(\.body) == [Data("{}".utf8), Data("{}".utf8)])
        #expect(grant.calls == 2)
    }

    @Test func aSecond401GoesToTheCaller() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        let transport = Self.resourceServer(valid: [])
        let session = session(
            [BearerTokenMiddleware(broker: broker, policy: AuthFixtures.security)],
            transport: transport
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/api/device/info"))
        #expect(response.status == .unauthorized)
        #expect(transport.requests.count == 2)
        #expect(grant.calls == 2)
    }

    @Test func a401BurstRenewsOnce() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        _ = try await broker.token()  // t1, which the server no longer accepts
        let transport = Self.resourceServer(valid: ["t2"])
        let session = session(
            [BearerTokenMiddleware(broker: broker, policy: AuthFixtures.security)],
            transport: transport
        )
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<300 {
                group.addTask { try await session.send(HTTPRequest(method: .get, path: "/x")).status.code }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(grant.calls == 2)
    }

    @Test func insufficientScopeAndUnreplayableBodiesAreNotRetried() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        let scope = MockTransport(security: AuthFixtures.security) { _, _ in
            Response(
                head: HTTPResponse(
                    status: .unauthorized,
                    headerFields: [.wwwAuthenticate: #"Bearer error="insufficient_scope""#]
                )
            )
        }
        _ = try await session(
            [BearerTokenMiddleware(broker: broker, policy: AuthFixtures.security)],
            transport: scope
        )
        .send(HTTPRequest(method: .get, path: "/x"))
        #expect(scope.requests.count == 1)

        let invalid = Self.resourceServer(valid: [])
        let once = AsyncStream<Data> {
            $0.yield(Data("{}".utf8))
            $0.finish()
        }
        let response = try await session(
            [BearerTokenMiddleware(broker: broker, policy: AuthFixtures.security)],
            transport: invalid
        )
        .send(HTTPRequest(method: .post, path: "/x"), body: .stream(once))
        #expect(response.status == .unauthorized)
        #expect(invalid.requests.count == 1)
        #expect(grant.calls == 1)
    }

    @Test func noTokenGoesToAnUntrustedOrPlainHost() async throws {
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let broker = AuthFixtures.broker(grant: grant, clock: clock, level: .device)
        let transport = Self.resourceServer(valid: ["t1"])
        let session = session(
            [BearerTokenMiddleware(broker: broker, policy: AuthFixtures.security)],
            transport: transport
        )
        await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(
                HTTPRequest(method: .get, scheme: "https", authority: "evil.example", path: "/steal")
            )
        }
        await #expect(throws: CourierError(.insecureScheme)) {
            try await session.send(
                HTTPRequest(method: .get, scheme: "http", authority: AuthFixtures.apiHost, path: "/plain")
            )
        }
        // Also when the session is unpinned (its transport reports no trust): the middleware
        // itself refuses.
        let unpinned = MockTransport(security: .unpinned) { _, _ in Response(head: HTTPResponse(status: .ok)) }
        let plain = Session(
            configuration: .init(
                baseURL: URL(string: "https://\(AuthFixtures.apiHost)")!,
                middlewares: [
                    BearerTokenMiddleware(broker: broker, policy: SecurityConfiguration.unpinned)
                ]
            ),
            transport: unpinned
        )
        await #expect(throws: CourierError(.untrustedHost)) {
            try await plain.send(HTTPRequest(method: .get, path: "/x"))
        }
        #expect(transport.requests.isEmpty)
        #expect(unpinned.requests.isEmpty)
        #expect(grant.calls == 0)
    }

    // MARK: Challenges

    static func basicServer(user: String, password: String) -> MockTransport {
        let expected = "Basic " + Data("\(user):\(password)".utf8).base64EncodedString()
        return MockTransport(security: AuthFixtures.security) { request, _ in
            guard request.headerFields[.authorization] == expected else {
                return Response(
                    head: HTTPResponse(status: .unauthorized, headerFields: [.wwwAuthenticate: #"Basic realm="files""#])
                )
            }
            return Response(head: HTTPResponse(status: .ok))
        }
    }

    @Test func aBasicChallengeIsAnsweredOnce() async throws {
        let transport = Self.basicServer(user: "user", password: "passwd")
        let asked = LockedBox<[String]>([])
        let provider = AnyChallengeCredentialProvider { context in
            asked.withLock {
                $0.append(
                    "\(context.scheme) \(context.realm ?? "") \(context.parameters["realm"] ?? "") \(context.host)"
                )
            }
            return ChallengeCredential(user: "user", password: "passwd")
        }
        let session = session(
            [ChallengeMiddleware(provider: provider, policy: AuthFixtures.security)],
            transport: transport
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/files"))
        #expect(response.status == .ok)
        #expect(transport.requests.count == 2)
        #expect(asked.withLock { $0 } == ["Basic files files \(AuthFixtures.apiHost)"])
    }

    @Test func wrongCredentialsAreATypedErrorNotALoop() async throws {
        let transport = Self.basicServer(user: "user", password: "passwd")
        let provider = AnyChallengeCredentialProvider { _ in ChallengeCredential(user: "user", password: "wrong") }
        let session = session(
            [ChallengeMiddleware(provider: provider, policy: AuthFixtures.security)],
            transport: transport
        )
        let error = await #expect(throws: CourierError(.challengeFailed)) {
            try await session.send(HTTPRequest(method: .get, path: "/files?x=1"))
        }
        #expect(error?.statusCode == 401)
        #expect(error?.endpoint == "GET /files")
        #expect(transport.requests.count == 2)
    }

    @Test func withoutCredentialsThe401GoesToTheCaller() async throws {
        let transport = Self.basicServer(user: "user", password: "passwd")
        let provider = AnyChallengeCredentialProvider { _ in nil }
        let session = session(
            [ChallengeMiddleware(provider: provider, policy: AuthFixtures.security)],
            transport: transport
        )
        #expect(try await session.send(HTTPRequest(method: .get, path: "/files")).status == .unauthorized)
        #expect(transport.requests.count == 1)
    }

    @Test func aStaleDigestNonceIsAnsweredAgain() async throws {
        let attempts = LockedBox(0)
        let transport = MockTransport(security: AuthFixtures.security) { request, _ in
            let attempt = attempts.withLock {
                $0 += 1
                return $0
            }
            switch attempt {
            case 1:
                return Response(
                    head: HTTPResponse(
                        status: .unauthorized,
                        headerFields: [.wwwAuthenticate: #"Digest realm="r", nonce="n1", qop="auth""#]
                    )
                )
            case 2:
                return Response(
                    head: HTTPResponse(
                        status: .unauthorized,
                        headerFields: [.wwwAuthenticate: #"Digest realm="r", nonce="n2", qop="auth", stale=true"#]
                    )
                )
            default:
                let answer = AuthenticationChallenge.parse(request.headerFields[.authorization] ?? "").first
                return Response(head: HTTPResponse(status: answer?.parameters["nonce"] == "n2" ? .ok : .badRequest))
            }
        }
        let provider = AnyChallengeCredentialProvider { _ in ChallengeCredential(user: "u", password: "p") }
        let session = session(
            [ChallengeMiddleware(provider: provider, policy: AuthFixtures.security)],
            transport: transport
        )
        #expect(try await session.send(HTTPRequest(method: .get, path: "/d")).status == .ok)
        #expect(transport.requests.count == 3)
    }

    // MARK: Response filter

    struct SessionCookieFilter: ResponseFilter {
        func decide(about response: Response, for request: HTTPRequest) async throws -> ResponseFilterDecision {
            guard response.headerFields[HTTPField.Name("X-Login-Required")!] != nil else { return .deliver }
            return .restart(setting: [.cookie: "session=obtained"])
        }
    }

    @Test func aResponseFilterRestartsTheRequestWithWhatItObtained() async throws {
        let transport = MockTransport(security: AuthFixtures.security) { request, _ in
            guard request.headerFields[.cookie] == "session=obtained" else {
                return Response(
                    head: HTTPResponse(status: .ok, headerFields: [HTTPField.Name("X-Login-Required")!: "1"])
                )
            }
            return Response(head: HTTPResponse(status: .ok), body: Response.Body(Data("resource".utf8)))
        }
        let session = session(
            [ResponseFilterMiddleware(filter: SessionCookieFilter(), policy: AuthFixtures.security)],
            transport: transport
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/saml"))
        #expect(String(decoding: response.data, as: UTF8.self) == "resource")
        #expect(transport.requests.count == 2)

        let stubborn = MockTransport(security: AuthFixtures.security) { _, _ in
            Response(head: HTTPResponse(status: .ok, headerFields: [HTTPField.Name("X-Login-Required")!: "1"]))
        }
        let looping = self.session(
            [ResponseFilterMiddleware(filter: SessionCookieFilter(), policy: AuthFixtures.security)],
            transport: stubborn
        )
        await #expect(throws: CourierError(.challengeFailed)) {
            try await looping.send(HTTPRequest(method: .get, path: "/saml"))
        }
        #expect(stubborn.requests.count == 2)
    }
}
