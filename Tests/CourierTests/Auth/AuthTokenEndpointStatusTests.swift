import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// What the token endpoint's error statuses become, with the fault server
/// (`Tests/Servers/faults.py`, `/oauth-error/{code}`) as the authorization server: throttling
/// (429) and an outage (5xx) are renewals that failed and are waited out, whatever OAuth error
/// the body names; only a 4xx OAuth error is a refused grant.
@Suite(.timeLimit(.minutes(1)))
struct AuthTokenEndpointStatusTests {
    /// Lets credentials go to the plain-HTTP fault server, where a secured configuration never
    /// sends them.
    struct AnyHost: CredentialPolicy {
        func checkCredentialTarget(_ request: HTTPRequest) throws {}
    }

    static let client = OAuth2ClientCredentials(clientID: "courier-device", clientSecret: "device-secret")

    /// A broker for `level` whose token endpoint is `path` on the fault server.
    static func broker(
        _ env: TestEnvironment,
        path: String,
        level: AuthorizationLevel,
        strategy: any GrantStrategy,
        store: InMemoryTokenStore = InMemoryTokenStore(),
        clock: TestClock = TestClock()
    ) -> (TokenBroker, CurlTransport) {
        let transport = CurlTransport(configuration: .init(proxy: .none))
        let endpoint = TokenEndpoint(
            server: AuthorizationServer(tokenEndpoint: env.faultURL(path)),
            client: client,
            transport: transport,
            policy: AnyHost()
        )
        let broker = TokenBroker(
            level: level,
            endpoint: endpoint,
            strategy: strategy,
            store: store,
            configuration: .init(),
            logger: nil,
            now: clock.function
        )
        return (broker, transport)
    }

    /// A store holding an expired user token with a refresh token.
    static func storeWithExpiredUserToken(clock: TestClock) async throws -> InMemoryTokenStore {
        let store = InMemoryTokenStore()
        let expired = OAuth2Token(
            accessToken: "expired-access",
            issuedAt: clock.now.addingTimeInterval(-7200),
            expiresAt: clock.now.addingTimeInterval(-3600),
            refreshToken: "refresh-1"
        )
        try await store.setToken(expired, for: TokenStoreKey(clientID: client.clientID, level: .user))
        return store
    }

    @Test(arguments: [429, 503])
    func aThrottledOrUnavailableClientCredentialsGrantIsARenewalFailure(status: Int) async throws {
        let env = try await TestServers.shared()
        let key = uniqueFaultKey("grant-\(status)")
        let clock = TestClock()
        let (broker, transport) = Self.broker(
            env,
            path: "/oauth-error/\(status)?key=\(key)&retry_after=30",
            level: .device,
            strategy: ClientCredentialsGrant(),
            clock: clock
        )
        let error = await #expect(throws: CourierError(.tokenRefreshFailed)) { try await broker.token() }
        #expect(error?.statusCode == status)
        #expect(error?.oauthError?.code == .temporarilyUnavailable)
        #expect(error?.response?.headerFields[.retryAfter] == "30")

        // Past every first backoff step but short of the 30 s the server asked for: the caller
        // gets the same failure at once, and the server is not asked again.
        clock.advance(5)
        let again = await #expect(throws: CourierError(.tokenRefreshFailed)) { try await broker.token() }
        #expect(again?.statusCode == status)
        #expect(again?.message.contains("the next device token renewal attempt is in 25.0 s") == true)
        #expect(try await env.faultStats(forKey: key).requests == 1)
        await transport.shutdown()
    }

    @Test(arguments: [429, 503])
    func aThrottledOrUnavailableRefreshKeepsTheRefreshToken(status: Int) async throws {
        let env = try await TestServers.shared()
        let key = uniqueFaultKey("refresh-\(status)")
        let clock = TestClock()
        let store = try await Self.storeWithExpiredUserToken(clock: clock)
        let (broker, transport) = Self.broker(
            env,
            path: "/oauth-error/\(status)?key=\(key)",
            level: .user,
            strategy: RefreshTokenGrant(),
            store: store,
            clock: clock
        )
        let error = await #expect(throws: CourierError(.tokenRefreshFailed)) { try await broker.token() }
        #expect(error?.statusCode == status)
        #expect(error?.oauthError?.code == .temporarilyUnavailable)
        let kept = try await store.token(for: TokenStoreKey(clientID: Self.client.clientID, level: .user))
        #expect(kept?.refreshToken == "refresh-1")
        #expect(try await env.faultStats(forKey: key).requests == 1)
        await transport.shutdown()
    }

    @Test func aRefusedGrantIsStillRejected() async throws {
        let env = try await TestServers.shared()
        let (broker, transport) = Self.broker(
            env,
            path: "/oauth-error/400?key=\(uniqueFaultKey("scope"))&error=invalid_scope",
            level: .device,
            strategy: ClientCredentialsGrant()
        )
        let error = await #expect(throws: CourierError(.grantRejected)) { try await broker.token() }
        #expect(error?.statusCode == 400)
        #expect(error?.oauthError?.code == .invalidScope)
        await transport.shutdown()
    }

    @Test func aRefreshTokenRefusedWithInvalidGrantSignsTheUserOut() async throws {
        let env = try await TestServers.shared()
        let clock = TestClock()
        let store = try await Self.storeWithExpiredUserToken(clock: clock)
        let (broker, transport) = Self.broker(
            env,
            path: "/oauth-error/400?key=\(uniqueFaultKey("gone"))&error=invalid_grant",
            level: .user,
            strategy: RefreshTokenGrant(),
            store: store,
            clock: clock
        )
        let error = await #expect(throws: CourierError(.userNotAuthenticated)) { try await broker.token() }
        #expect(error?.oauthError?.code == .invalidGrant)
        #expect(try await store.token(for: TokenStoreKey(clientID: Self.client.clientID, level: .user)) == nil)
        await transport.shutdown()
    }
}
