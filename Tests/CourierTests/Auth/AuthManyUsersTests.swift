import CourierTesting
import Foundation
import HTTPTypes
import Synchronization
import Testing

@testable import Courier

/// One ResourceAccess acting for many users, over a scripted authorization server and a
/// gateway that answers with the bearer token it received.
@Suite(.timeLimit(.minutes(1)))
struct AuthManyUsersTests {
    /// Counts the token requests of the scripted server, by grant type.
    final class TokenRequests: Sendable {
        private let counts = LockedBox<[String: Int]>([:])
        func record(_ grant: String) { counts.withLock { $0[grant, default: 0] += 1 } }
        subscript(grant: String) -> Int { counts.withLock { $0[grant, default: 0] } }
        var total: Int { counts.withLock { $0.values.reduce(0, +) } }
    }

    /// The password grant issues `<username>.<n>`, a refresh `<username>.<n>` again (the user
    /// is in the refresh token `r.<username>`); the gateway echoes the bearer token.
    static func servers(_ requests: TokenRequests) -> MockTransport {
        let counter = Atomic<Int>(0)
        return MockTransport(security: AuthFixtures.security) { request, body in
            guard request.authority == AuthFixtures.authHost else {
                let token = request.headerFields[.authorization] ?? "none"
                return Response(head: HTTPResponse(status: .ok), body: Response.Body(Data(token.utf8)))
            }
            if request.path == "/oauth/revoke" { return AuthFixtures.json(.ok, "{}") }
            let form = AuthFixtures.form(body)
            let grant = form["grant_type"] ?? "?"
            requests.record(grant)
            let n = counter.add(1, ordering: .relaxed).newValue
            let user: String
            switch grant {
            case "password": user = form["username"] ?? "?"
            case "refresh_token": user = String((form["refresh_token"] ?? "r.?").dropFirst(2))
            case AuthorizationServer.GrantType.tokenExchange.rawValue:
                return AuthFixtures.json(
                    .ok,
                    #"{"access_token":"implicit.\#(form["subject_token"] ?? "?")","token_type":"Bearer","expires_in":600}"#
                )
            default: return AuthFixtures.json(.badRequest, #"{"error":"unsupported_grant_type"}"#)
            }
            return AuthFixtures.json(
                .ok,
                #"{"access_token":"\#(user).\#(n)","token_type":"Bearer","expires_in":600,"refresh_token":"r.\#(user)"}"#
            )
        }
    }

    func access(
        _ transport: MockTransport,
        store: any TokenStore = InMemoryTokenStore(),
        configure: (inout ResourceAccess.Configuration) -> Void = { _ in }
    ) throws -> ResourceAccess {
        var configuration = ResourceAccess.Configuration(
            resourceBaseURL: URL(string: "https://\(AuthFixtures.apiHost)")!,
            authorizationServer: AuthFixtures.server,
            transport: .init(proxy: .none, security: AuthFixtures.security),  // not used: the mock's applies
            userClient: AuthFixtures.client,
            deviceClient: OAuth2ClientCredentials(clientID: "device-1", clientSecret: "d"),
            tokenStore: store
        )
        configure(&configuration)
        return try ResourceAccess(configuration: configuration, transport: transport)
    }

    /// The bearer token the gateway saw.
    func bearer(_ response: Response) -> String {
        String(decoding: response.data, as: UTF8.self)
    }

    static let request = ResourceRequest(path: "/api/x")

    @Test func eachUserSignsInAndSendsItsOwnToken() async throws {
        let requests = TokenRequests()
        let access = try access(Self.servers(requests))
        #expect(access.userClient(for: "u-1") === access.userClient(for: "u-1"))
        #expect(access.userClient(for: "u-1") !== access.userClient(for: "u-2"))
        try await access.userClient(for: "u-1").authenticate(username: "ann", password: "pw")
        try await access.userClient(for: "u-2").authenticate(username: "ben", password: "pw")
        #expect(await !access.userClient.isAuthenticated)  // the single user is another user
        try await withThrowingTaskGroup(of: Void.self) { group in
            for round in 0..<50 {
                let key = round.isMultiple(of: 2) ? "u-1" : "u-2"
                let name = round.isMultiple(of: 2) ? "ann" : "ben"
                group.addTask {
                    let response = try await access.userClient(for: key).sendAuthenticatedRequest(Self.request)
                    #expect(bearer(response).hasPrefix("Bearer \(name)."))
                    let task = try access.userClient(for: key).startAuthenticatedRequest(Self.request)
                    #expect(bearer(try await task.value).hasPrefix("Bearer \(name)."))
                    let implicit = try await access.userClient(for: key).sendImplicitRequest(Self.request)
                    #expect(bearer(implicit).hasPrefix("Bearer implicit.\(name)."))
                }
            }
            try await group.waitForAll()
        }
        #expect(requests["password"] == 2)
        #expect(requests["refresh_token"] == 0)
        #expect(requests[AuthorizationServer.GrantType.tokenExchange.rawValue] == 2)  // one per user
        await access.shutdown()
    }

    @Test func usersShareTheSessionsOfTheirResourceAccess() throws {
        let access = try access(Self.servers(TokenRequests()))
        let first = access.userClient(for: "u-1")
        let second = access.userClient(for: "u-2")
        #expect(first.shared === second.shared)
        #expect(first.shared === access.userClient.shared)
        #expect(first.broker !== second.broker)
        #expect(
            first.broker.storeKey == TokenStoreKey(clientID: AuthFixtures.client.clientID, level: .user, user: "u-1")
        )
        #expect(access.userClient.broker.storeKey.user == nil)
    }

    @Test func logoutOfOneUserRemovesOnlyItsTokens() async throws {
        let store = InMemoryTokenStore()
        let requests = TokenRequests()
        let access = try access(Self.servers(requests), store: store)
        let client = AuthFixtures.client.clientID
        try await access.userClient.authenticate(username: "solo", password: "pw")
        for (key, name) in [("u-1", "ann"), ("u-2", "ben")] {
            try await access.userClient(for: key).authenticate(username: name, password: "pw")
            _ = try await access.userClient(for: key).sendImplicitRequest(Self.request)
        }
        let report = await access.userClient(for: "u-1").logout()
        #expect(report.isComplete)
        #expect(try await store.token(for: TokenStoreKey(clientID: client, level: .user, user: "u-1")) == nil)
        #expect(try await store.token(for: TokenStoreKey(clientID: client, level: .implicit, user: "u-1")) == nil)
        #expect(try await store.token(for: TokenStoreKey(clientID: client, level: .user, user: "u-2")) != nil)
        #expect(try await store.token(for: TokenStoreKey(clientID: client, level: .implicit, user: "u-2")) != nil)
        #expect(try await store.token(for: TokenStoreKey(clientID: client, level: .user)) != nil)
        let error = await #expect(throws: CourierError(.userNotAuthenticated)) {
            try await access.userClient(for: "u-1").sendAuthenticatedRequest(Self.request)
        }
        #expect(error?.requestKind == .authenticated)
        #expect(
            bearer(try await access.userClient(for: "u-2").sendAuthenticatedRequest(Self.request)).hasPrefix(
                "Bearer ben."
            )
        )
        #expect(bearer(try await access.userClient.sendAuthenticatedRequest(Self.request)).hasPrefix("Bearer solo."))
        await access.shutdown()
    }

    @Test func anEvictedUserComesBackFromTheStoreWithoutSigningIn() async throws {
        let requests = TokenRequests()
        let access = try access(Self.servers(requests)) { $0.maximumUsersInMemory = 2 }
        for n in 1...5 {
            try await access.userClient(for: "u-\(n)").authenticate(username: "user\(n)", password: "pw")
        }
        #expect(access.users.count == 2)
        #expect(access.users.evictions == 3)
        for n in 1...5 {
            let response = try await access.userClient(for: "u-\(n)").sendAuthenticatedRequest(Self.request)
            #expect(bearer(response).hasPrefix("Bearer user\(n)."))
        }
        #expect(access.users.count == 2)
        #expect(requests["password"] == 5)
        #expect(requests.total == 5)  // back from the store: no new sign-in, no renewal
        await access.shutdown()
    }

    @Test func aUserHeldByItsCallerIsNotEvicted() async throws {
        let access = try access(Self.servers(TokenRequests())) { $0.maximumUsersInMemory = 1 }
        do {
            let held = access.userClient(for: "held")
            try await held.authenticate(username: "ann", password: "pw")
            for n in 1...20 { _ = access.userClient(for: "u-\(n)") }
            #expect(access.users.contains("held"))
            #expect(access.userClient(for: "held") === held)
            // Two users in memory now: the held one and the newest.
            #expect(access.users.count == 2)
        }
        // Once let go, it goes.
        for n in 21...25 { _ = access.userClient(for: "u-\(n)") }
        #expect(access.users.count == 1)
        await access.shutdown()
    }

    @Test func aUserWhoseRenewalIsInFlightIsNotEvictedAndRenewsOnce() async throws {
        let store = InMemoryTokenStore()
        let clock = TestClock()
        let grant = ScriptedGrant(clock: clock)
        let access = try access(Self.servers(TokenRequests()), store: store) {
            $0.maximumUsersInMemory = 1
            $0.strategies.userRenewal = grant
        }
        let key = TokenStoreKey(clientID: AuthFixtures.client.clientID, level: .user, user: "renewing")
        try await store.setToken(
            OAuth2Token(accessToken: "old", expiresAt: Date().addingTimeInterval(-60), refreshToken: "r-old"),
            for: key
        )
        grant.hold()
        // The caller gives up while the renewal waits at the gate; the renewal goes on.
        let caller = Task { try await access.userClient(for: "renewing").sendAuthenticatedRequest(Self.request) }
        while !grant.isWaitingAtGate { await Task.yield() }
        caller.cancel()
        _ = await caller.result
        for n in 1...10 { _ = access.userClient(for: "u-\(n)") }
        #expect(access.users.contains("renewing"))
        grant.release()
        let response = try await access.userClient(for: "renewing").sendAuthenticatedRequest(Self.request)
        #expect(bearer(response) == "Bearer t1")
        #expect(grant.calls == 1)
        await access.shutdown()
    }

    /// A store of the app's own, without the per-user removal: the default removes the
    /// user's own levels and leaves every other user alone.
    final class PlainStore: TokenStore {
        let tokens = LockedBox<[TokenStoreKey: OAuth2Token]>([:])
        func token(for key: TokenStoreKey) async throws -> OAuth2Token? { tokens.withLock { $0[key] } }
        func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
            tokens.withLock { $0[key] = token }
        }
        func removeTokens(clientID: String) async throws {
            tokens.withLock { $0 = $0.filter { $0.key.clientID != clientID } }
        }
    }

    @Test func theDefaultPerUserRemovalLeavesOtherUsersAlone() async throws {
        let store = PlainStore()
        let token = OAuth2Token(accessToken: "a", expiresAt: nil)
        for user in ["u-1", "u-2"] {
            for level in [AuthorizationLevel.user, .implicit] {
                try await store.setToken(token, for: TokenStoreKey(clientID: "c", level: level, user: user))
            }
        }
        try await store.removeTokens(clientID: "c", user: "u-1")
        #expect(store.tokens.withLock { Set($0.keys.compactMap(\.user)) } == ["u-2"])
        #expect(store.tokens.withLock { $0.count } == 2)
    }
}
