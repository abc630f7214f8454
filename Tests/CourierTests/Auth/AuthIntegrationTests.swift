import Foundation
import HTTPTypes
import Logging
import Testing

@testable import Courier

/// Secured resource access against the real authorization server (authlib) and resource
/// gateway, over pinned TLS. Serialized: the servers are shared, and some tests change token
/// lifetimes or expire every token; grant counts are always compared as deltas.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct AuthIntegrationTests {
    let env: AuthEnvironment
    let admin: OAuthAdmin

    init() async throws {
        env = try await AuthServers.shared()
        admin = OAuthAdmin(env)
    }

    static let tokenExchange = AuthorizationServer.GrantType.tokenExchange.rawValue

    func access(_ configure: (inout ResourceAccess.Configuration) -> Void = { _ in }) throws -> ResourceAccess {
        var configuration = env.configuration()
        configure(&configuration)
        return try ResourceAccess(configuration: configuration)
    }

    func json(_ response: Response) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
    }

    /// The grant counts after `body` minus those before.
    func grantDelta(_ body: () async throws -> Void) async throws -> [String: Int] {
        try await admin.grantDelta(body)
    }

    /// A browser for the authorization code grant: follows the authorization URL (the test
    /// server consents automatically for `login_hint`) and returns where it redirects.
    func browser(rewrite: @escaping @Sendable (URL) -> URL = { $0 }) -> OAuth2Grant.Browser {
        let security = env.security
        return { url in
            let session = Session(
                configuration: .init(maximumRedirects: 0),
                transport: CurlTransport(configuration: .init(proxy: .none, security: security))
            )
            defer { Task { await session.shutdown() } }
            let target = rewrite(url)
            let components = URLComponents(url: target, resolvingAgainstBaseURL: false)!
            let response = try await session.send(
                HTTPRequest(
                    method: .get,
                    scheme: components.scheme,
                    authority: Authority(url: target)?.description,
                    path: components.percentEncodedPath + (components.percentEncodedQuery.map { "?" + $0 } ?? "")
                )
            )
            guard response.status.code == 302, let location = response.headerFields[.location],
                let redirect = URL(string: location)
            else { throw TestServersError(message: "the authorization endpoint answered \(response.status)") }
            return redirect
        }
    }

    // MARK: Grants

    @Test func clientCredentialsGrant() async throws {
        let access = try access()
        let delta = try await grantDelta {
            let token = try await access.deviceClient.authenticate()
            #expect(token.scope == ["device"])
            #expect(token.refreshToken == nil)
            #expect(token.lifetime ?? 0 > 0)
        }
        #expect(delta == ["client_credentials": 1])
        await access.shutdown()
    }

    @Test func clientAuthenticationInTheBodyAndWrongSecrets() async throws {
        let body = try access {
            $0.deviceClient = OAuth2ClientCredentials(
                clientID: "courier-device",
                clientSecret: "device-secret",
                authentication: .body
            )
        }
        _ = try await body.deviceClient.authenticate()
        await body.shutdown()

        let wrong = try access {
            $0.deviceClient = OAuth2ClientCredentials(clientID: "courier-device", clientSecret: "nope")
        }
        let error = await #expect(throws: CourierError(.clientAuthenticationFailed)) {
            try await wrong.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
        }
        #expect(error?.requestKind == .anonymous)
        #expect(error?.statusCode == 401)
        #expect(error?.oauthError?.code == .invalidClient)
        await wrong.shutdown()
    }

    @Test func passwordGrant() async throws {
        let access = try access()
        let delta = try await grantDelta {
            let token = try await access.userClient.authenticate(username: "alice", password: "wonderland")
            #expect(token.refreshToken != nil)
            #expect(token.scope == [.read, .write, .profile])
        }
        #expect(delta == ["password": 1])
        #expect(await access.userClient.isAuthenticated)
        let error = await #expect(throws: CourierError(.grantRejected)) {
            try await access.userClient.authenticate(username: "alice", password: "wrong")
        }
        #expect(error?.oauthError?.code == .invalidGrant)
        #expect(error?.statusCode == 400)
        await access.shutdown()
    }

    @Test func refreshTokenGrantRotates() async throws {
        let access = try access()
        let first = try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let delta = try await grantDelta {
            try await admin.expireAll()
            let response = try await access.userClient.sendAuthenticatedRequest(
                ResourceRequest(path: "/api/user/profile")
            )
            #expect(response.statusCode == 200)
        }
        #expect(delta == ["refresh_token": 1])
        let second = try #require(try await access.userClient.broker.currentToken())
        #expect(second.refreshToken != first.refreshToken)
        // The rotated-out refresh token is dead.
        let endpoint = access.userClient.endpoint
        let error = await #expect(throws: CourierError(.grantRejected)) {
            try await endpoint.requestToken(
                grantType: .refreshToken,
                parameters: [("refresh_token", first.refreshToken ?? "")]
            )
        }
        #expect(error?.oauthError?.code == .invalidGrant)
        await access.shutdown()
    }

    @Test func authorizationCodeGrantWithPKCE() async throws {
        let access = try access()
        let redirect = URL(string: "http://127.0.0.1/callback")!
        let delta = try await grantDelta {
            let token = try await access.userClient.authorize(
                redirectURI: redirect,
                additionalParameters: [("login_hint", "alice")],
                browser: browser()
            )
            #expect(token.refreshToken != nil)
        }
        #expect(delta == ["authorization_code": 1])
        let profile = try json(
            try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        )
        #expect(profile["username"] as? String == "alice")

        // No user: the server redirects with access_denied.
        await #expect(throws: CourierError(.authorizationDenied)) {
            try await access.userClient.authorize(redirectURI: redirect, browser: browser())
        }
        // A tampered state is caught before the code is used.
        let forged = browser { url in
            URL(string: url.absoluteString.replacingOccurrences(of: "state=", with: "state=forged"))!
        }
        await #expect(throws: CourierError(.invalidAuthorizationResponse)) {
            try await access.userClient.authorize(
                redirectURI: redirect,
                additionalParameters: [("login_hint", "alice")],
                browser: forged
            )
        }
        await access.shutdown()
    }

    @Test func tokenExchangeGrant() async throws {
        let access = try access()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let delta = try await grantDelta {
            let exchange = TokenExchangeRequest(scope: [.read], audience: ["courier-gateway"])
            for _ in 0..<3 {  // the exchanged token is kept and reused
                let response = try await access.userClient.sendExchangedRequest(
                    ResourceRequest(path: "/api/user/profile"),
                    exchange: exchange
                )
                #expect(response.statusCode == 200)
                let profile = try json(response)
                #expect(profile["username"] as? String == "alice")
                #expect(profile["scope"] as? String == "read")
                #expect(profile["name"] == nil)  // no `profile` scope
            }
        }
        #expect(delta == [Self.tokenExchange: 1])

        // An audience the gateway does not accept: the gateway rejects the token (401), Courier
        // exchanges once more, and the second 401 goes to the caller.
        let elsewhere = try await grantDelta {
            let response = try await access.userClient.sendExchangedRequest(
                ResourceRequest(path: "/api/user/profile"),
                exchange: TokenExchangeRequest(scope: [.read], audience: ["courier-api"])
            )
            #expect(response.statusCode == 401)
        }
        #expect(elsewhere == [Self.tokenExchange: 2])
        await access.shutdown()
    }

    @Test func extensionGrantByURI() async throws {
        let access = try access()
        let user = try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let grant = ExtensionGrant(
            grantType: AuthorizationServer.GrantType(rawValue: Self.tokenExchange),
            parameters: [
                ("subject_token", user.accessToken),
                ("subject_token_type", AuthorizationServer.TokenTypeIdentifier.accessToken.rawValue),
                ("audience", "courier-gateway"),
            ],
            scope: [.read]
        )
        let token = try await grant.obtainToken(
            GrantContext(
                level: .implicit,
                current: nil,
                reason: .requested,
                endpoint: access.userClient.endpoint,
                logger: Session.silentLogger
            )
        )
        #expect(token.issuedTokenType == AuthorizationServer.TokenTypeIdentifier.accessToken.rawValue)
        #expect(try await admin.isActive(token.accessToken))
        await access.shutdown()
    }

    // MARK: The four request kinds

    @Test func theFourRequestKindsUseTheRightTokens() async throws {
        let access = try access()
        let user = access.userClient
        let device = access.deviceClient
        let profile = ResourceRequest(path: "/api/user/profile")

        // Before sign-in: the user kinds fail with the kind that failed; the others work.
        let authenticated = await #expect(throws: CourierError(.userNotAuthenticated)) {
            try await user.sendAuthenticatedRequest(profile)
        }
        #expect(authenticated?.requestKind == .authenticated)
        let implicit = await #expect(throws: CourierError(.userNotAuthenticated)) {
            try await user.sendImplicitRequest(profile)
        }
        #expect(implicit?.requestKind == .implicit)
        #expect(
            try await device.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/status")).statusCode == 200
        )

        try await user.authenticate(username: "alice", password: "wonderland")

        // Authenticated: the user's token, full scope.
        let me = try json(try await user.sendAuthenticatedRequest(profile).validate())
        #expect(me["username"] as? String == "alice")
        #expect(me["client_id"] as? String == "courier-user")
        #expect(me["email"] != nil)

        // Implicit: a user token with the implicit scope only.
        let implicitMe = try json(try await user.sendImplicitRequest(profile).validate())
        #expect(implicitMe["username"] as? String == "alice")
        #expect(implicitMe["scope"] as? String == "read")
        #expect(implicitMe["email"] == nil)

        // Anonymous: the device token — good for the device route, not for the user route.
        let info = try json(
            try await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/info")).validate()
        )
        #expect(info["client_id"] as? String == "courier-device")
        #expect(info["username"] == nil)
        let refused = try await device.sendAnonymousRequest(profile)
        #expect(refused.statusCode == 403)
        #expect(refused[header: "WWW-Authenticate"]?.contains("insufficient_scope") == true)

        // Unauthenticated: no token at all — public route fine, user route 401.
        let status = try json(
            try await device.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/status")).validate()
        )
        #expect(status["status"] as? String == "ok")
        #expect(try await device.sendUnauthenticatedRequest(profile).statusCode == 401)
        let headers = try json(
            try await device.sendUnauthenticatedRequest(ResourceRequest(path: "/api/headers")).validate()
        )
        #expect((headers["headers"] as? [String: String])?["Authorization"] == nil)

        // Writes with the user's token; a body round-trips.
        let echo = try await user.sendAuthenticatedRequest(
            ResourceRequest(path: "/api/user/echo", method: .post, parameters: ["hello": "world"])
        )
        #expect(try json(echo)["hello"] as? String == "world")
        await access.shutdown()
    }

    @Test func eachKindHasATaskVariant() async throws {
        let access = try access()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let tasks = [
            try access.userClient.startAuthenticatedRequest(ResourceRequest(path: "/api/user/profile")),
            try access.userClient.startImplicitRequest(ResourceRequest(path: "/api/user/profile")),
            try access.deviceClient.startAnonymousRequest(ResourceRequest(path: "/api/device/info")),
            try access.deviceClient.startUnauthenticatedRequest(ResourceRequest(path: "/api/public/status")),
        ]
        for task in tasks {
            let response = try await task.value
            #expect(response.status == .ok)
            #expect(task.state == .completed)
        }
        // A task's failure carries the request kind too.
        _ = await access.userClient.logout()
        let failing = try access.userClient.startImplicitRequest(ResourceRequest(path: "/api/user/profile"))
        let error = await #expect(throws: CourierError(.userNotAuthenticated)) { try await failing.value }
        #expect(error?.requestKind == .implicit)
        await access.shutdown()
    }

    // MARK: Refresh under load

    @Test func aThousandRequestsJustAfterExpiryCauseOneRefresh() async throws {
        let access = try access()
        try await admin.setLifetime(2)
        do {
            try await access.userClient.authenticate(username: "alice", password: "wonderland")
            let token = try #require(try await access.userClient.broker.currentToken())
            #expect(token.lifetime == 2)
            // A running app: the connection to the gateway is already open.
            #expect(
                try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
                    .statusCode == 200
            )
            try await Task.sleep(until: .now + .seconds(2.3), clock: .continuous)  // expired, here and at the server
            try await admin.setLifetime(3600)  // the new token outlives the burst
            let user = access.userClient
            var statuses: [Int] = []
            let delta = try await grantDelta {
                statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                    for _ in 0..<1000 {
                        group.addTask {
                            try await user.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
                                .statusCode
                        }
                    }
                    return try await group.reduce(into: [Int]()) { $0.append($1) }
                }
            }
            #expect(statuses.count == 1000)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(delta == ["refresh_token": 1])
            #expect(await user.broker.statistics.renewals == 1)
        } catch {
            try? await admin.setLifetime(3600)
            throw error
        }
        await access.shutdown()
    }

    @Test func aBurstOf401sCausesOneRefresh() async throws {
        let access = try access()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        #expect(
            try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile")).statusCode
                == 200
        )
        try await admin.expireAll()  // the server rejects the token the client still thinks valid
        let user = access.userClient
        var statuses: [Int] = []
        let delta = try await grantDelta {
            statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for _ in 0..<300 {
                    group.addTask {
                        try await user.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile")).statusCode
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
        }
        #expect(statuses.allSatisfy { $0 == 200 })
        #expect(delta == ["refresh_token": 1])
        await access.shutdown()
    }

    @Test func aRevokedRefreshTokenSignsTheUserOut() async throws {
        let store = InMemoryTokenStore()
        let access = try access { $0.tokenStore = store }
        let token = try await access.userClient.authenticate(username: "alice", password: "wonderland")
        try await access.userClient.endpoint.revoke(try #require(token.refreshToken), hint: .refreshToken)
        try await admin.expireAll()
        let error = await #expect(throws: CourierError(.userNotAuthenticated)) {
            try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        }
        #expect(error?.oauthError?.code == .invalidGrant)
        #expect(error?.requestKind == .authenticated)
        #expect(try await store.token(for: TokenStoreKey(clientID: "courier-user", level: .user)) == nil)
        #expect(await !access.userClient.isAuthenticated)
        await access.shutdown()
    }

    // MARK: Storage

    @Test func rotationSurvivesARestartWithTheFileStore() async throws {
        let directory = NSTemporaryDirectory() + "courier-auth-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/tokens.store"

        // First process: sign in, then a refresh rotates the refresh token.
        let first = try access { $0.tokenStore = EncryptedFileTokenStore(path: path) }
        let signedIn = try await first.userClient.authenticate(username: "alice", password: "wonderland")
        try await admin.expireAll()
        #expect(
            try await first.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile")).statusCode
                == 200
        )
        let rotated = try #require(try await first.userClient.broker.currentToken())
        #expect(rotated.refreshToken != signedIn.refreshToken)
        await first.shutdown()

        // Second process, same file: it must present the rotated refresh token.
        let failedBefore = try await admin.stats()["failed_grants"] as? Int ?? 0
        let second = try access { $0.tokenStore = EncryptedFileTokenStore(path: path) }
        #expect(await second.userClient.isAuthenticated)
        try await admin.expireAll()
        let delta = try await grantDelta {
            let response = try await second.userClient.sendAuthenticatedRequest(
                ResourceRequest(path: "/api/user/profile")
            )
            #expect(response.statusCode == 200)
        }
        #expect(delta == ["refresh_token": 1])
        #expect(try await admin.stats()["failed_grants"] as? Int ?? 0 == failedBefore)
        await second.shutdown()
    }

    @Test func aTamperedStoreIsATypedError() async throws {
        let directory = NSTemporaryDirectory() + "courier-auth-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let path = directory + "/tokens.store"
        let first = try access { $0.tokenStore = EncryptedFileTokenStore(path: path) }
        try await first.userClient.authenticate(username: "alice", password: "wonderland")
        await first.shutdown()

        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        bytes[bytes.count - 20] ^= 0x5A
        try Data(bytes).write(to: URL(fileURLWithPath: path))

        let second = try access { $0.tokenStore = EncryptedFileTokenStore(path: path) }
        let grantsBefore = try await admin.grants()
        // The store's own kind, not wrapped, with the request kind and level.
        let error = await #expect(throws: CourierError(.tokenStoreTampered)) {
            try await second.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        }
        #expect(error?.requestKind == .authenticated)
        #expect(error?.level == .user)
        #expect(error?.filePath == path)
        // Never a garbage token: nothing was sent to the gateway or the authorization server.
        #expect(try await admin.grants() == grantsBefore)
        await second.shutdown()
    }

    // MARK: Logout

    @Test func logoutRevokesEverythingAndWipes() async throws {
        let store = InMemoryTokenStore()
        let wiped = LockedBox(false)
        let access = try access {
            $0.tokenStore = store
            $0.onLogout = { wiped.withLock { $0 = true } }
        }
        let user = try await access.userClient.authenticate(username: "alice", password: "wonderland")
        _ = try await access.userClient.sendImplicitRequest(ResourceRequest(path: "/api/user/profile"))
        let implicit = try #require(try await access.userClient.implicitBroker.currentToken())
        let device = try await access.deviceClient.authenticate()
        for token in [user.accessToken, try #require(user.refreshToken), implicit.accessToken] {
            #expect(try await admin.isActive(token))
        }

        let report = await access.userClient.logout()
        #expect(report.isComplete)
        #expect(report.revokedTokens == 3)  // the refresh token, then both access tokens
        for token in [user.accessToken, try #require(user.refreshToken), implicit.accessToken] {
            #expect(try await !admin.isActive(token))
        }
        #expect(try await store.token(for: TokenStoreKey(clientID: "courier-user", level: .user)) == nil)
        #expect(try await store.token(for: TokenStoreKey(clientID: "courier-user", level: .implicit)) == nil)
        #expect(wiped.withLock { $0 })
        await #expect(throws: CourierError(.userNotAuthenticated)) {
            try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        }
        // The device is not the user: its token stays.
        #expect(try await admin.isActive(device.accessToken))
        #expect(
            try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info")).statusCode
                == 200
        )
        await access.shutdown()
    }

    @Test func aRenewalThatFinishesAfterLogoutIsRevoked() async throws {
        let access = try access()
        let signedIn = try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let store = InMemoryTokenStore()
        try await store.setToken(signedIn, for: TokenStoreKey(clientID: "courier-user", level: .user))
        let started = LockedBox(false)
        let obtained = LockedBox<OAuth2Token?>(nil)
        // A refresh that is still on its way when the user logs out.
        let slowRefresh = OAuth2Grant { context in
            started.withLock { $0 = true }
            try await Task.sleep(for: .milliseconds(300))
            let token = try await RefreshTokenGrant().obtainToken(context)
            obtained.withLock { $0 = token }
            return token
        }
        let broker = TokenBroker(
            level: .user,
            endpoint: access.userClient.endpoint,
            strategy: slowRefresh,
            store: store
        )
        let current = try await broker.token()
        let renewal = Task { try await broker.tokenRejected(current) }
        while !started.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }

        try await broker.wipe()
        await #expect(throws: CourierError(.userNotAuthenticated)) { try await renewal.value }
        #expect(try await broker.currentToken() == nil)

        // The server issued new tokens to the abandoned renewal; the broker revokes them.
        let deadline = ContinuousClock.now + .seconds(10)
        while obtained.withLock({ $0 }) == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        let orphan = try #require(obtained.withLock { $0 })
        let orphanRefresh = try #require(orphan.refreshToken)
        while try await admin.isActive(orphanRefresh), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(try await !admin.isActive(orphanRefresh))
        #expect(try await !admin.isActive(orphan.accessToken))
        await access.shutdown()
    }

    // MARK: Challenges and confinement

    @Test func aBasicChallengeFromARealServer() async throws {
        let access = try access {
            $0.challengeCredentialProvider = AnyChallengeCredentialProvider { context in
                context.scheme.caseInsensitiveCompare("Basic") == .orderedSame
                    ? ChallengeCredential(user: "user", password: "passwd") : nil
            }
        }
        // httpbin behind the suite's nginx, on the same trusted host (127.0.0.1) as the gateway.
        let url = env.nginxHTTPS.absoluteString + "/httpbin/basic-auth/user/passwd"
        let response = try await access.deviceClient.sendUnauthenticatedRequest(ResourceRequest(path: url))
        #expect(response.statusCode == 200)
        #expect(try json(response)["authenticated"] as? Bool == true)

        let wrong = try self.access {
            $0.challengeCredentialProvider = AnyChallengeCredentialProvider { _ in
                ChallengeCredential(user: "user", password: "nope")
            }
        }
        let error = await #expect(throws: CourierError(.challengeFailed)) {
            try await wrong.deviceClient.sendUnauthenticatedRequest(ResourceRequest(path: url))
        }
        #expect(error?.requestKind == .unauthenticated)
        #expect(error?.endpoint == "GET /httpbin/basic-auth/user/passwd")
        await access.shutdown()
        await wrong.shutdown()
    }

    @Test func noTokenForAnUntrustedAbsoluteURL() async throws {
        let access = try access()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let untrusted = await #expect(throws: CourierError(.untrustedHost)) {
            try await access.userClient.sendAuthenticatedRequest(
                ResourceRequest(path: "https://localhost:1/api/user/profile")
            )
        }
        #expect(untrusted?.requestKind == .authenticated)
        await #expect(throws: CourierError(.insecureScheme)) {
            try await access.userClient.sendAuthenticatedRequest(
                ResourceRequest(path: self.env.oauthPlain.absoluteString + "/healthz")
            )
        }
        await access.shutdown()
    }

    @Test func anUnpinnedConfigurationIsRefused() throws {
        var configuration = env.configuration()
        configuration.transport.security = .unpinned
        #expect(throws: CourierError(.invalidConfiguration)) { try ResourceAccess(configuration: configuration) }
        configuration = env.configuration()
        configuration.authorizationServer = AuthorizationServer(baseURL: env.oauthPlain)  // plain HTTP
        #expect(throws: CourierError(.invalidConfiguration)) { try ResourceAccess(configuration: configuration) }
    }

    /// The authorization server's listener pinned to a key its certificate does not have: the
    /// handshake is aborted, and the caller sees the pin mismatch — a security refusal, never
    /// a renewal failure to retry.
    @Test func aPinMismatchAtTheTokenEndpointSurfacesAsPinMismatch() async throws {
        let wrongPin = try SPKIPin(sha256: [UInt8](repeating: 7, count: 32))
        let gatewayPort = try #require(env.gateway.port)
        let oauthPort = try #require(env.oauth.port)
        var configuration = env.configuration()
        configuration.transport.security = try .secured(trust: [
            try TrustPolicy(
                host: "127.0.0.1",
                port: gatewayPort,
                pins: env.pins,
                pinnedCertificateAuthorities: env.caBundle
            ),
            try TrustPolicy(
                host: "127.0.0.1",
                port: oauthPort,
                pins: [wrongPin],
                pinnedCertificateAuthorities: env.caBundle
            ),
        ])
        let access = try ResourceAccess(configuration: configuration)
        let tokenPath = "POST " + env.authorizationServer.tokenEndpoint.path
        #expect(tokenPath == "POST /oauth/token")

        let delta = try await grantDelta {
            // First sign-in.
            let signIn = await #expect(throws: CourierError(.pinMismatch)) {
                try await access.userClient.authenticate(username: "alice", password: "wonderland")
            }
            #expect(signIn?.kind != .tokenRefreshFailed)
            #expect(signIn?.endpoint == tokenPath)
            #expect(signIn?.requestKind == .authenticated)
            #expect(signIn?.host == "127.0.0.1")
            #expect(signIn?.expectedPins == [wrongPin])

            // The device token is obtained on demand: same kind, with the request kind that needed it.
            let anonymous = await #expect(throws: CourierError(.pinMismatch)) {
                try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
            }
            #expect(anonymous?.endpoint == tokenPath)
            #expect(anonymous?.requestKind == .anonymous)
        }
        #expect(delta.isEmpty)  // nothing reached the authorization server
        #expect(await !access.userClient.isAuthenticated)

        // The gateway's own pins are right: only the authorization server is refused.
        let status = try await access.deviceClient.sendUnauthenticatedRequest(
            ResourceRequest(path: "/api/public/status")
        )
        #expect(status.statusCode == 200)
        await access.shutdown()
    }

    @Test func noSecretReachesTheLogs() async throws {
        let handler = CapturingLogHandler()
        let access = try access { $0.logger = handler.makeLogger() }
        let user = try await access.userClient.authenticate(username: "alice", password: "wonderland")
        try await admin.expireAll()
        _ = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        _ = try await access.userClient.sendImplicitRequest(ResourceRequest(path: "/api/user/profile"))
        let device = try await access.deviceClient.authenticate()
        let renewed = try #require(try await access.userClient.broker.currentToken())
        _ = await access.userClient.logout()
        let lines = handler.captured
        #expect(lines.count > 10)
        let secrets = [
            user.accessToken, user.refreshToken, renewed.accessToken, renewed.refreshToken, device.accessToken,
            "wonderland", "user-secret", "device-secret",
            Data("courier-user:user-secret".utf8).base64EncodedString(),
        ].compactMap { $0 }
        for secret in secrets {
            #expect(!lines.contains { $0.contains(secret) }, "a log line holds a secret")
        }
        await access.shutdown()
    }
}
