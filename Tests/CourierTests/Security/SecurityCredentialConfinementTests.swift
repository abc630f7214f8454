import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

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
        let session = try SecuritySupport.session(env, trust: try trustBoth(env), credentials: (Self.token, Self.cookie))
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
        let session = try SecuritySupport.session(env, trust: try trustBoth(env), credentials: (Self.token, Self.cookie))
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
        let session = try SecuritySupport.session(env, trust: try trustBoth(env), credentials: (Self.token, Self.cookie))
        let body = Data("card=4111111111111111".utf8)
        let error = await #expect(throws: SecurityError.crossOriginRedirect) {
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
        let error = await #expect(throws: SecurityError.untrustedHost) {
            try await session.send(HTTPRequest(method: .get, path: "/redirect/cross-origin"))
        }
        #expect(error?.host == "localhost")
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
        await #expect(throws: SecurityError.pinMismatch) {
            try await session.send(HTTPRequest(method: .get, path: "/redirect/to-attacker"))
        }
        await SecuritySupport.close(session)
    }

    @Test func aRedirectFromHTTPSToHTTPIsRefused() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(env, trust: try trustBoth(env), credentials: (Self.token, Self.cookie))
        await #expect(throws: TransportError.insecureRedirect) {
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
        let error = await #expect(throws: SecurityError.untrustedHost) {
            try await session.send(HTTPRequest(method: .get, scheme: "https", authority: "localhost:\(port)", path: marker))
        }
        #expect(error?.host == "localhost")
        // The same through a resource request whose path is an absolute URL.
        let resourceMarker = SecuritySupport.uniquePath()
        await #expect(throws: SecurityError.untrustedHost) {
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
        await #expect(throws: SecurityError.insecureScheme) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        // The transport refuses plain HTTP too, for a request that bypasses the session.
        let transport = try #require(session.transport as? CurlTransport)
        await #expect(throws: TransportError.self) {
            try await transport.execute(
                HTTPRequest(method: .get, scheme: "http", authority: env.nginxHTTP.host! + ":\(env.nginxHTTP.port!)", path: marker),
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
        let error = await #expect(throws: SecurityError.untrustedHost) {
            try await transport.execute(
                HTTPRequest(method: .get, scheme: "https", authority: "localhost:\(env.nginxHTTPS.port!)", path: marker),
                body: nil,
                options: TransferOptions(),
                control: TransferControl()
            )
        }
        #expect(error?.host == "localhost")
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func callerSetAuthorizationAndUserAgentAreRefusedOnSecuredSessions() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(env, trust: try trustBoth(env))
        var withAuthorization = HTTPRequest(method: .get, path: "/bytes/0")
        withAuthorization.headerFields[.authorization] = "Bearer caller"
        await #expect(throws: SessionError.invalidHeader("")) { try await session.send(withAuthorization) }
        var withUserAgent = HTTPRequest(method: .get, path: "/bytes/0")
        withUserAgent.headerFields[.userAgent] = "curl/8"
        await #expect(throws: SessionError.invalidHeader("")) { try await session.send(withUserAgent) }
        await #expect(throws: RequestError.self) {
            try await session.send(ResourceRequest(path: "/bytes/0", headers: ["Authorization": "Bearer caller"]))
        }
        await SecuritySupport.close(session)

        // Nor through the session's default header fields.
        let security = try SecurityConfiguration.secured(trust: try trustBoth(env))
        let defaults = Session(
            configuration: .init(
                baseURL: env.nginxHTTPS,
                defaultHeaderFields: [.authorization: "Bearer default"],
                security: security
            ),
            transport: CurlTransport(configuration: .init(proxy: .none, trustedCertificateBundlePath: env.caBundle, security: security))
        )
        await #expect(throws: SessionError.invalidHeader("")) {
            try await defaults.send(HTTPRequest(method: .get, path: "/bytes/0"))
        }
        await SecuritySupport.close(defaults)
    }

    @Test func aSecuredSessionRefusesATransportThatDoesNotEnforceItsTrust() async throws {
        let env = try await TestServers.shared()
        let security = try SecurityConfiguration.secured(trust: try trustBoth(env))
        let plain = Session(
            configuration: .init(baseURL: env.nginxHTTPS, security: security),
            transport: CurlTransport(configuration: .init(proxy: .none, trustedCertificateBundlePath: env.caBundle))
        )
        let marker = SecuritySupport.uniquePath()
        await #expect(throws: SecurityError.trustNotEnforced) {
            try await plain.send(HTTPRequest(method: .get, path: marker))
        }
        await SecuritySupport.close(plain)
        let mock = Session(
            configuration: .init(baseURL: env.nginxHTTPS, security: security),
            transport: MockTransport { _, _ in Response(head: HTTPResponse(status: .ok), body: ResponseBody(Data())) }
        )
        await #expect(throws: SecurityError.trustNotEnforced) {
            try await mock.send(HTTPRequest(method: .get, path: "/bytes/0"))
        }
        await mock.shutdown()
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)

        // A session that creates its own transport configures it with its security.
        let own = Session(configuration: .init(baseURL: env.nginxHTTPS, security: security))
        let ownTransport = try #require(own.transport as? CurlTransport)
        #expect(ownTransport.enforces(security))
        #expect(ownTransport.configuration.security == security)
        await own.shutdown()
    }

    @Test func credentialsMayBeAttachedOnlyToTrustedHTTPSHosts() throws {
        let policy = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        let security = try SecurityConfiguration.secured(trust: [policy])
        func request(_ scheme: String, _ authority: String) -> HTTPRequest {
            HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/")
        }
        #expect(security.mayAttachCredentials(to: request("https", "api.example.com")))
        #expect(security.mayAttachCredentials(to: request("https", "API.example.com.:8443")))
        #expect(!security.mayAttachCredentials(to: request("http", "api.example.com")))
        #expect(!security.mayAttachCredentials(to: request("https", "evil.example.com")))
        #expect(!security.mayAttachCredentials(to: request("https", "user:pw@api.example.com")))
        #expect(!security.mayAttachCredentials(to: HTTPRequest(method: .get, path: "/relative")))
        #expect(!SecurityConfiguration.unpinned.mayAttachCredentials(to: request("https", "api.example.com")))
        #expect(throws: SecurityError.insecureScheme) { try security.checkCredentialTarget(request("http", "api.example.com")) }

        let session = Session(
            configuration: .init(baseURL: URL(string: "https://api.example.com/v1")!, security: security),
            transport: MockTransport { _, _ in Response(head: HTTPResponse(status: .ok), body: ResponseBody(Data())) }
        )
        #expect(session.mayAttachCredentials(to: HTTPRequest(method: .get, path: "/users")))
        #expect(!session.mayAttachCredentials(to: request("https", "evil.example.com")))
        let plain = Session(
            configuration: .init(baseURL: URL(string: "https://api.example.com")!),
            transport: MockTransport { _, _ in Response(head: HTTPResponse(status: .ok), body: ResponseBody(Data())) }
        )
        #expect(!plain.mayAttachCredentials(to: HTTPRequest(method: .get, path: "/users")))
    }
}
