import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Credentials go only to trusted hosts, never across origins on a redirect, and never
/// downgraded to HTTP; secured sessions refuse everything else before sending.
@Suite(.timeLimit(.minutes(2)))
struct SecurityCredentialConfinementTests {
    private static let token = "secret-token-\(UUID().uuidString)"
    private static let cookie = "session=secret-cookie-\(UUID().uuidString)"

    private func trustBoth(_ env: TestEnvironment) throws -> [TrustPolicy] {
        let pins = [try SecuritySupport.pin(env.rootPin)]
        return [try TrustPolicy(host: "127.0.0.1", pins: pins), try TrustPolicy(host: "localhost", pins: pins)]
    }

    @Test func aSameOriginRedirectKeepsTheCredentials() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: try trustBoth(env),
            credentials: (Self.token, Self.cookie)
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/redirect/same-origin"))
        #expect(response.status == .ok)
        #expect(response.metrics?.redirectCount == 1)
        let headers = try SecuritySupport.echoedHeaders(response)
        #expect(headers["authorization"] == "Bearer \(Self.token)")
        #expect(headers["cookie"] == Self.cookie)
        await SecuritySupport.close(session)
    }

    // libcurl 7.88 drops a custom Authorization and Cookie header when a redirect changes
    // host, port or scheme (CVE-2022-27776, CVE-2018-1000007); this pins that behaviour.
    @Test func aCrossOriginRedirectToATrustedHostCarriesNoCredentials() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: try trustBoth(env),
            credentials: (Self.token, Self.cookie)
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/redirect/cross-origin"))
        #expect(response.status == .ok)
        #expect(response.metrics?.redirectCount == 1)
        let headers = try SecuritySupport.echoedHeaders(response)
        #expect(headers["host"]?.hasPrefix("localhost:") == true)
        #expect(headers["authorization"] == nil)
        #expect(headers["cookie"] == nil)
        #expect(!String(decoding: response.data, as: UTF8.self).contains(Self.token))
        await SecuritySupport.close(session)
    }

    // libcurl resends the body on 307/308 to wherever Location points; a secured session
    // stops such a redirect when it leaves the origin.
    @Test func aCrossOriginRedirectThatWouldResendTheBodyIsRefused() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: try trustBoth(env),
            credentials: (Self.token, Self.cookie)
        )
        let body = Data("card=4111111111111111".utf8)
        let error = await #expect(throws: CourierError(.crossOriginRedirect)) {
            try await session.send(HTTPRequest(method: .post, path: "/redirect/cross-origin-307"), body: .data(body))
        }
        #expect(error?.host == "localhost")
        #expect(error?.message.contains("4111") == false)

        // Without a body there is nothing to leak: a cross-origin 307 is followed.
        let bodiless = try await session.send(HTTPRequest(method: .get, path: "/redirect/cross-origin-307"))
        #expect(bodiless.status == .ok)
        #expect(bodiless.metrics?.redirectCount == 1)
        await SecuritySupport.close(session)
    }

    @Test func aRedirectToAnUntrustedHostIsRefusedInTheHandshake() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.rootPin)])],
            credentials: (Self.token, Self.cookie)
        )
        let error = await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(HTTPRequest(method: .get, path: "/redirect/cross-origin"))
        }
        // The authority the redirect led to, as the connection named it.
        #expect(error?.host == "localhost:\(env.nginxHTTPS.port!)")
        #expect(error?.message.contains("localhost:\(env.nginxHTTPS.port!)") == true)
        await SecuritySupport.close(session)
    }

    @Test func aRedirectIsPinnedWithThePolicyOfTheHostItLeadsTo() async throws {
        let env = try await TestServers.shared()
        let bothRoots = try SecuritySupport.bundleWithAttackerRoot(env)
        defer { try? FileManager.default.removeItem(atPath: bothRoots) }
        // The attacker's chain verifies against this bundle, but its keys are not pinned.
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.rootPin)])],
            caBundle: .some(bothRoots),
            credentials: (Self.token, Self.cookie)
        )
        await #expect(throws: CourierError(.pinMismatch)) {
            try await session.send(HTTPRequest(method: .get, path: "/redirect/to-attacker"))
        }
        await SecuritySupport.close(session)
    }

    @Test func aRedirectFromHTTPSToHTTPIsRefused() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: try trustBoth(env),
            credentials: (Self.token, Self.cookie)
        )
        await #expect(throws: CourierError(.insecureRedirect)) {
            try await session.send(HTTPRequest(method: .get, path: "/redirect/to-http"))
        }
        await SecuritySupport.close(session)
    }

    @Test func anAbsoluteURLToAnUntrustedHostIsRefusedBeforeAnythingIsSent() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.rootPin)])],
            credentials: (Self.token, Self.cookie)
        )
        let port = env.nginxAttacker.port!
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(
                HTTPRequest(method: .get, scheme: "https", authority: "localhost:\(port)", path: marker)
            )
        }
        #expect(error?.host == "localhost:\(port)")
        #expect(error?.message.contains("localhost:\(port)") == true)
        // The same through a resource request whose path is an absolute URL.
        let resourceMarker = SecuritySupport.uniquePath()
        await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(ResourceRequest(path: "https://localhost:\(port)\(resourceMarker)"))
        }
        try await SecuritySupport.expectNeverReached(env, .attacker, marker: marker)
        #expect(try SecuritySupport.logEntries(env, .attacker, containing: resourceMarker).isEmpty)
        await SecuritySupport.close(session)
    }

    @Test func plainHTTPIsRefusedBeforeAnythingIsSent() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(env, .http, trust: try trustBoth(env))
        let marker = SecuritySupport.uniquePath()
        await #expect(throws: CourierError(.insecureScheme)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        // The transport refuses plain HTTP too, for a request that bypasses the session.
        let transport = try #require(session.transport as? CurlTransport)
        await #expect(throws: CourierError.self) {
            try await transport.execute(
                HTTPRequest(
                    method: .get,
                    scheme: "http",
                    authority: env.nginxHTTP.host! + ":\(env.nginxHTTP.port!)",
                    path: marker
                ),
                body: nil,
                options: TransferOptions(),
                control: TransferControl()
            )
        }
        try await SecuritySupport.expectNeverReached(env, .http, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func theTransportRefusesUntrustedHostsEvenWhenTheSessionIsBypassed() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.rootPin)])]
        )
        let transport = try #require(session.transport as? CurlTransport)
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.untrustedHost)) {
            try await transport.execute(
                HTTPRequest(
                    method: .get,
                    scheme: "https",
                    authority: "localhost:\(env.nginxHTTPS.port!)",
                    path: marker
                ),
                body: nil,
                options: TransferOptions(),
                control: TransferControl()
            )
        }
        #expect(error?.host == "localhost:\(env.nginxHTTPS.port!)")
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func callerSetAuthorizationAndUserAgentAreRefusedOnSecuredSessions() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(env, trust: try trustBoth(env))
        var withAuthorization = HTTPRequest(method: .get, path: "/bytes/0")
        withAuthorization.headerFields[.authorization] = "Bearer caller"
        await #expect(throws: CourierError(.reservedHeader)) { try await session.send(withAuthorization) }
        var withUserAgent = HTTPRequest(method: .get, path: "/bytes/0")
        withUserAgent.headerFields[.userAgent] = "curl/8"
        await #expect(throws: CourierError(.reservedHeader)) { try await session.send(withUserAgent) }
        await #expect(throws: CourierError(.reservedHeader)) {
            try await session.send(ResourceRequest(path: "/bytes/0", headerFields: [.authorization: "Bearer caller"]))
        }
        await SecuritySupport.close(session)

        // Nor through the session's default header fields.
        let security = try SecurityConfiguration.secured(trust: try trustBoth(env))
        let defaults = Session(
            configuration: .init(
                baseURL: env.nginxHTTPS,
                defaultHeaderFields: [.authorization: "Bearer default"]
            ),
            transport: CurlTransport(
                configuration: .init(proxy: .none, trustedCertificateBundlePath: env.caBundle, security: security)
            )
        )
        await #expect(throws: CourierError(.reservedHeader)) {
            try await defaults.send(HTTPRequest(method: .get, path: "/bytes/0"))
        }
        await SecuritySupport.close(defaults)
    }

    // MARK: The session enforces the transport's security

    /// A mock that reports `security` and counts how often its responder ran.
    private func securedMock(_ security: SecurityConfiguration) -> (MockTransport, LockedBox<Int>) {
        let calls = LockedBox(0)
        let mock = MockTransport(security: security) { _, _ in
            calls.withLock { $0 += 1 }
            return Response(head: HTTPResponse(status: .ok), body: Response.Body(Data()))
        }
        return (mock, calls)
    }

    @Test func aSessionEnforcesTheSecurityItsTransportReports() async throws {
        let policy = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        let security = try SecurityConfiguration.secured(trust: [policy])
        let (mock, calls) = securedMock(security)
        #expect(mock.security == security)
        let session = Session(
            configuration: .init(baseURL: URL(string: "https://api.example.com/v1")!),
            transport: mock
        )

        // Plain HTTP, as an absolute request or an absolute resource path.
        let http = await #expect(throws: CourierError(.insecureScheme)) {
            try await session.send(
                HTTPRequest(method: .get, scheme: "http", authority: "api.example.com", path: "/users")
            )
        }
        #expect(http?.host == "api.example.com")
        await #expect(throws: CourierError(.insecureScheme)) {
            try await session.send(ResourceRequest(path: "http://api.example.com/users"))
        }
        // A host without a policy.
        let untrusted = await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(
                HTTPRequest(method: .get, scheme: "https", authority: "evil.example.com", path: "/users")
            )
        }
        #expect(untrusted?.host == "evil.example.com")
        await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(ResourceRequest(path: "https://evil.example.com/users"))
        }
        // User information in the authority.
        await #expect(throws: CourierError(.invalidURL)) {
            try await session.send(
                HTTPRequest(method: .get, scheme: "https", authority: "user:pw@api.example.com", path: "/users")
            )
        }
        // A caller-set Authorization, on the request or as a default field.
        var withAuthorization = HTTPRequest(method: .get, path: "/users")
        withAuthorization.headerFields[.authorization] = "Bearer caller"
        await #expect(throws: CourierError(.reservedHeader)) { try await session.send(withAuthorization) }
        await session.reconfigure { $0.defaultHeaderFields[.authorization] = "Bearer default" }
        await #expect(throws: CourierError(.reservedHeader)) {
            try await session.send(HTTPRequest(method: .get, path: "/users"))
        }
        // The responder never ran and the transport recorded nothing.
        #expect(calls.withLock { $0 } == 0)
        #expect(mock.requests.isEmpty)

        // A trusted HTTPS request goes through, resolved against the base URL.
        await session.reconfigure { $0.defaultHeaderFields[.authorization] = nil }
        let response = try await session.send(HTTPRequest(method: .get, path: "/users"))
        #expect(response.status == .ok)
        #expect(calls.withLock { $0 } == 1)
        let sent = try #require(mock.requests.last?.request)
        #expect(sent.scheme == "https")
        #expect(sent.authority == "api.example.com")
        #expect(sent.path == "/v1/users")
        await session.shutdown()
    }

    @Test func theSameRequestsGoThroughAnUnpinnedTransport() async throws {
        // The checks above come from the transport, not from the session: on an unpinned
        // mock the same session configuration sends plain HTTP and untrusted hosts.
        let (mock, calls) = securedMock(.unpinned)
        #expect(mock.security == .unpinned)
        let session = Session(
            configuration: .init(baseURL: URL(string: "https://api.example.com/v1")!),
            transport: mock
        )
        _ = try await session.send(
            HTTPRequest(method: .get, scheme: "http", authority: "api.example.com", path: "/users")
        )
        _ = try await session.send(
            HTTPRequest(method: .get, scheme: "https", authority: "evil.example.com", path: "/users")
        )
        #expect(calls.withLock { $0 } == 2)
        // But nothing may attach a credential there.
        let credentials = TestCredentialMiddleware(security: mock.security, token: "t", cookie: "c")
        let withCredentials = Session(
            configuration: .init(baseURL: URL(string: "https://api.example.com/v1")!, middlewares: [credentials]),
            transport: mock
        )
        await #expect(throws: CourierError(.untrustedHost)) {
            try await withCredentials.send(HTTPRequest(method: .get, path: "/users"))
        }
        #expect(calls.withLock { $0 } == 2)
        await session.shutdown()
        await withCredentials.shutdown()
    }

    @Test func aSessionTakesItsSecurityFromItsTransport() async throws {
        let env = try await TestServers.shared()
        let security = try SecurityConfiguration.secured(trust: try trustBoth(env))
        let secured = try SecuritySupport.session(env, trust: try trustBoth(env))
        #expect(secured.transport.security == security)
        #expect((secured.transport as? CurlTransport)?.configuration.security == security)
        await SecuritySupport.close(secured)

        // A session that creates its own transport makes an unpinned one.
        let own = Session(configuration: .init(baseURL: env.nginxHTTPS))
        #expect(own.transport.security == .unpinned)
        #expect(try #require(own.transport as? CurlTransport).configuration.security == .unpinned)
        await own.shutdown()

        // A custom transport that says nothing about trust is unpinned.
        struct Silent: Transport {
            func execute(
                _ request: HTTPRequest,
                body: RequestBody?,
                options: TransferOptions,
                control: TransferControl
            )
                async throws -> Response
            {
                Response(head: HTTPResponse(status: .ok), body: Response.Body(Data()))
            }
        }
        #expect(Silent().security == .unpinned)
    }

    @Test func securedResourceAccessRefusesAnUnpinnedTransport() async throws {
        let policy = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        let security = try SecurityConfiguration.secured(trust: [policy])
        let configuration = ResourceAccess.Configuration(
            resourceBaseURL: URL(string: "https://api.example.com/v1")!,
            authorizationServer: AuthorizationServer(baseURL: URL(string: "https://api.example.com/oauth")!),
            transport: .init(proxy: .none, security: security),
            userClient: OAuth2ClientCredentials(clientID: "user", clientSecret: "user-secret"),
            deviceClient: OAuth2ClientCredentials(clientID: "device", clientSecret: "device-secret")
        )
        let (unpinned, calls) = securedMock(.unpinned)
        let error = #expect(throws: CourierError(.invalidConfiguration)) {
            try ResourceAccess(configuration: configuration, transport: unpinned)
        }
        #expect(error?.message.contains("unpinned") == true)
        // The transport's security counts, not the configuration's.
        let plainCurl = CurlTransport(configuration: .init(proxy: .none))
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ResourceAccess(configuration: configuration, transport: plainCurl)
        }
        await plainCurl.shutdown()
        var unpinnedConfiguration = configuration
        unpinnedConfiguration.transport = .init(proxy: .none)
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ResourceAccess(configuration: unpinnedConfiguration)
        }

        // A secured transport that does not trust the resource gateway is refused too.
        let elsewhere = try SecurityConfiguration.secured(trust: [
            try TrustPolicy(host: "other.example.com", pins: [SecuritySupport.unrelatedPin])
        ])
        let (wrongHosts, _) = securedMock(elsewhere)
        let untrusted = #expect(throws: CourierError(.invalidConfiguration)) {
            try ResourceAccess(configuration: configuration, transport: wrongHosts)
        }
        #expect(untrusted?.host == "api.example.com")

        // A secured mock that trusts both endpoints is accepted, and nothing was sent.
        let (securedTransport, _) = securedMock(security)
        let access = try ResourceAccess(configuration: configuration, transport: securedTransport)
        #expect(access.transport.security == security)
        await access.shutdown()
        #expect(calls.withLock { $0 } == 0)
    }

    @Test func credentialsMayBeAttachedOnlyToTrustedHTTPSHosts() async throws {
        let policy = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        let security = try SecurityConfiguration.secured(trust: [policy])
        func request(_ scheme: String, _ authority: String) -> HTTPRequest {
            HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/")
        }
        func mayAttach(_ security: SecurityConfiguration, _ request: HTTPRequest) -> Bool {
            (try? security.checkCredentialTarget(request)) != nil
        }
        #expect(mayAttach(security, request("https", "api.example.com")))
        // A policy without a port covers every port of its host.
        #expect(mayAttach(security, request("https", "API.example.com.:8443")))
        #expect(!mayAttach(security, request("http", "api.example.com")))
        #expect(!mayAttach(security, request("https", "evil.example.com")))
        #expect(!mayAttach(security, request("https", "user:pw@api.example.com")))
        #expect(!mayAttach(security, HTTPRequest(method: .get, path: "/relative")))
        #expect(!mayAttach(.unpinned, request("https", "api.example.com")))

        #expect(throws: CourierError(.insecureScheme)) {
            try security.checkCredentialTarget(request("http", "api.example.com"))
        }
        let evil = #expect(throws: CourierError(.untrustedHost)) {
            try security.checkCredentialTarget(request("https", "evil.example.com"))
        }
        #expect(evil?.host == "evil.example.com")
        let userInfo = #expect(throws: CourierError(.invalidURL)) {
            try security.checkCredentialTarget(request("https", "user:pw@api.example.com"))
        }
        #expect(userInfo?.message.contains("pw") == false)
        #expect(throws: CourierError(.invalidURL)) {
            try security.checkCredentialTarget(HTTPRequest(method: .get, path: "/relative"))
        }
        let unpinned = #expect(throws: CourierError(.untrustedHost)) {
            try SecurityConfiguration.unpinned.checkCredentialTarget(request("https", "api.example.com"))
        }
        #expect(unpinned?.host == "api.example.com")
        #expect(unpinned?.message.contains("unpinned") == true)

        // Through a session, the gate sees the request resolved against the base URL.
        let (mock, calls) = securedMock(security)
        let token = "secret-\(UUID().uuidString)"
        let session = Session(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/v1")!,
                middlewares: [TestCredentialMiddleware(security: mock.security, token: token, cookie: "c=1")]
            ),
            transport: mock
        )
        _ = try await session.send(HTTPRequest(method: .get, path: "/users"))
        #expect(mock.requests.last?.request.headerFields[.authorization] == "Bearer \(token)")
        await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(request("https", "evil.example.com"))
        }
        #expect(calls.withLock { $0 } == 1)
        await session.shutdown()
    }
}
