import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// ResourceAccess and its clients over a scripted authorization server and gateway.
@Suite(.timeLimit(.minutes(1)))
struct AuthClientTests {
    /// Counts what passes through the app's own middleware.
    struct Counter: Middleware {
        let seen: LockedBox<[String]>
        func intercept(
            _ request: HTTPRequest,
            body: RequestBody?,
            context: MiddlewareContext,
            next: Next
        ) async throws
            -> Response
        {
            seen.withLock { $0.append(request.path ?? "") }
            return try await next(request, body, context)
        }
    }

    /// An authorization server that issues `user-N` (password, refresh with rotation),
    /// `device-N` (client credentials) and `implicit-N` (token exchange), and a gateway that
    /// accepts any token it issued.
    static func servers() -> MockTransport {
        let counter = LockedBox(0)
        return MockTransport(security: AuthFixtures.security) { request, body in
            let path = request.path ?? ""
            if request.authority == AuthFixtures.authHost {
                #expect(request.headerFields[.authorization]?.hasPrefix("Basic ") == true)  // never a Bearer token
                let form = AuthFixtures.form(body)
                let n = counter.withLock {
                    $0 += 1
                    return $0
                }
                if path == "/oauth/revoke" { return AuthFixtures.json(.ok, "{}") }
                switch form["grant_type"] {
                case "password", "refresh_token":
                    return AuthFixtures.json(
                        .ok,
                        #"{"access_token":"user-\#(n)","token_type":"Bearer","expires_in":600,"refresh_token":"r-\#(n)"}"#
                    )
                case "client_credentials":
                    return AuthFixtures.json(
                        .ok,
                        #"{"access_token":"device-\#(n)","token_type":"Bearer","expires_in":600}"#
                    )
                case AuthorizationServer.GrantType.tokenExchange.rawValue:
                    #expect(form["subject_token"]?.hasPrefix("user-") == true)
                    return AuthFixtures.json(
                        .ok,
                        #"{"access_token":"implicit-\#(n)","token_type":"Bearer","expires_in":600,"scope":"read"}"#
                    )
                default:
                    return AuthFixtures.json(.badRequest, #"{"error":"unsupported_grant_type"}"#)
                }
            }
            let token = request.headerFields[.authorization] ?? "none"
            return Response(head: HTTPResponse(status: .ok), body: Response.Body(Data(token.utf8)))
        }
    }

    func access(
        _ transport: MockTransport,
        seen: LockedBox<[String]>,
        configure: (inout ResourceAccess.Configuration) -> Void = { _ in }
    ) throws -> ResourceAccess {
        var configuration = ResourceAccess.Configuration(
            resourceBaseURL: URL(string: "https://\(AuthFixtures.apiHost)")!,
            authorizationServer: AuthFixtures.server,
            transport: .init(proxy: .none, security: AuthFixtures.security),  // not used: the mock's applies
            userClient: AuthFixtures.client,
            deviceClient: OAuth2ClientCredentials(clientID: "device-1", clientSecret: "d")
        )
        configuration.middlewares = [Counter(seen: seen)]
        configure(&configuration)
        return try ResourceAccess(configuration: configuration, transport: transport)
    }

    @Test func eachKindSendsItsOwnTokenAndTokenRequestsSkipTheAppsMiddleware() async throws {
        let transport = Self.servers()
        let seen = LockedBox<[String]>([])
        let access = try access(transport, seen: seen)
        try await access.userClient.authenticate(username: "alice", password: "pw")
        func body(_ response: Response) -> String { String(decoding: response.data, as: UTF8.self) }
        let request = ResourceRequest(path: "/api/x")
        #expect(body(try await access.userClient.sendAuthenticatedRequest(request)) == "Bearer user-1")
        #expect(body(try await access.userClient.sendImplicitRequest(request)) == "Bearer implicit-2")
        #expect(body(try await access.deviceClient.sendAnonymousRequest(request)) == "Bearer device-3")
        #expect(body(try await access.deviceClient.sendUnauthenticatedRequest(request)) == "none")
        let task = try access.userClient.startAuthenticatedRequest(request)
        #expect(String(decoding: try await task.value.data, as: UTF8.self) == "Bearer user-1")
        // The app's middleware saw the five resource requests and none of the token requests.
        #expect(seen.withLock { $0 } == Array(repeating: "/api/x", count: 5))
        #expect(transport.requests.filter { $0.request.authority == AuthFixtures.authHost }.count == 3)
        await access.shutdown()
    }

    @Test func afterShutdownEveryEntryPointFailsAsShutDown() async throws {
        let transport = Self.servers()
        let access = try access(transport, seen: LockedBox([]))
        try await access.userClient.authenticate(username: "alice", password: "pw")
        await access.shutdown()
        let before = transport.requests.count
        await #expect(throws: CourierError(.shutDown)) { try await access.deviceClient.authenticate() }
        await #expect(throws: CourierError(.shutDown)) {
            _ = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/x"))
        }
        let exchanged = await #expect(throws: CourierError(.shutDown)) {
            _ = try await access.userClient.sendExchangedRequest(
                ResourceRequest(path: "/x"),
                exchange: TokenExchangeRequest(scope: [.read], audience: ["after-shutdown"])
            )
        }
        #expect(exchanged?.requestKind == .authenticated)
        #expect(transport.requests.count == before)
    }

    @Test func signingInAgainDropsTokensDerivedFromThePreviousUser() async throws {
        let transport = Self.servers()
        let access = try access(transport, seen: LockedBox([]))
        try await access.userClient.authenticate(username: "alice", password: "pw")
        _ = try await access.userClient.sendImplicitRequest(ResourceRequest(path: "/api/x"))
        try await access.userClient.authenticate(username: "bob", password: "pw")
        let response = try await access.userClient.sendImplicitRequest(ResourceRequest(path: "/api/x"))
        #expect(String(decoding: response.data, as: UTF8.self) == "Bearer implicit-4")
        await access.shutdown()
    }

    @Test func logoutRevokesRefreshThenAccessTokens() async throws {
        let transport = Self.servers()
        let access = try access(transport, seen: LockedBox([]))
        try await access.userClient.authenticate(username: "alice", password: "pw")
        _ = try await access.userClient.sendImplicitRequest(ResourceRequest(path: "/api/x"))
        let report = await access.userClient.logout()
        #expect(report.isComplete)
        let revoked = transport.requests.filter { $0.request.path == "/oauth/revoke" }.map {
            AuthFixtures.form($0.body)
        }
        #expect(revoked.map { $0["token"] ?? "" } == ["r-1", "user-1", "implicit-2"])
        #expect(revoked.map { $0["token_type_hint"] ?? "" } == ["refresh_token", "access_token", "access_token"])
        #expect(await !access.userClient.isAuthenticated)
        await access.shutdown()
    }

    @Test func anonymousRequestsMaySendTheClientsBasicCredentials() async throws {
        let transport = Self.servers()
        let access = try access(transport, seen: LockedBox([])) { $0.anonymousAuthorization = .clientBasic }
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/x"))
        #expect(
            String(decoding: response.data, as: UTF8.self) == "Basic " + Data("device-1:d".utf8).base64EncodedString()
        )
        #expect(transport.requests.allSatisfy { $0.request.authority == AuthFixtures.apiHost })  // no token request
        await access.shutdown()
    }

    @Test func aCustomImplicitStrategyGetsTheUsersTokenFromItsContext() async throws {
        let transport = Self.servers()
        let subjects = LockedBox<[String]>([])
        let access = try access(transport, seen: LockedBox([])) {
            $0.strategies.implicit = OAuth2Grant { context in
                let subject = try await context.userAccessToken()
                subjects.withLock { $0.append(subject) }
                return try await context.requestToken(
                    grantType: .tokenExchange,
                    parameters: [
                        ("subject_token", subject),
                        ("subject_token_type", AuthorizationServer.TokenTypeIdentifier.accessToken.rawValue),
                    ],
                    requestedScope: [.read]
                )
            }
            // A level that is not derived from the user has no user token to give.
            $0.strategies.device = OAuth2Grant { context in
                _ = try await context.userAccessToken()
                throw CourierError(.grantRejected, message: "unreachable")
            }
        }
        let request = ResourceRequest(path: "/api/x")
        // No user yet: the user level's error, for the implicit request.
        let early = await #expect(throws: CourierError(.userNotAuthenticated)) {
            try await access.userClient.sendImplicitRequest(request)
        }
        #expect(early?.requestKind == .implicit)
        #expect(subjects.withLock { $0 }.isEmpty)

        try await access.userClient.authenticate(username: "alice", password: "pw")
        let response = try await access.userClient.sendImplicitRequest(request)
        #expect(String(decoding: response.data, as: UTF8.self) == "Bearer implicit-2")
        _ = try await access.userClient.sendImplicitRequest(request)  // kept, not exchanged again
        #expect(subjects.withLock { $0 } == ["user-1"])

        let device = await #expect(throws: CourierError(.missingConfiguration)) {
            try await access.deviceClient.sendAnonymousRequest(request)
        }
        #expect(device?.requestKind == .anonymous)
        await access.shutdown()
    }
}
