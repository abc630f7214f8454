import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// A valid token for code not behind Courier (a gRPC or WebSocket call carrying the token
/// itself), against the real authorization server with 2-second tokens: renewed through the
/// broker exactly as a request's token, once however many callers wait. Serialized: the tests
/// change the server's token lifetime.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct AuthValidTokenTests {
    let env: AuthEnvironment
    let admin: OAuthAdmin

    init() async throws {
        env = try await AuthServers.shared()
        admin = OAuthAdmin(env)
    }

    /// The grant counts after `body` minus those before.
    func grantDelta(_ body: () async throws -> Void) async throws -> [String: Int] {
        try await admin.grantDelta(body)
    }

    /// `validToken` from `callers` concurrent tasks.
    static func validTokens(
        _ callers: Int,
        _ fetch: @escaping @Sendable () async throws -> OAuth2Token
    ) async throws -> [OAuth2Token] {
        try await withThrowingTaskGroup(of: OAuth2Token.self) { group in
            for _ in 0..<callers { group.addTask { try await fetch() } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }

    @Test func anExpiredUserTokenIsRenewedOnceForAHundredCallers() async throws {
        let access = try ResourceAccess(configuration: env.configuration())
        let user = access.userClient(for: "u-valid-token")
        // Renewed within half its lifetime of expiry: the checks of the valid token below have
        // one second.
        try await admin.setLifetime(2)
        do {
            let first = try await user.authenticate(username: "alice", password: "wonderland")
            #expect(first.lifetime == 2)
            // While it is valid, the same token comes back and nothing is asked of the server.
            let unchanged = try await grantDelta {
                let tokens = try await Self.validTokens(100) { try await user.validToken() }
                #expect(tokens.allSatisfy { $0.accessToken == first.accessToken })
            }
            #expect(unchanged.isEmpty)

            // Expired here and at the server.
            let expiry = try #require(first.expiresAt)
            try await Task.sleep(for: .seconds(max(expiry.timeIntervalSinceNow, 0) + 0.3))
            try await admin.setLifetime(3600)  // the new token outlives the burst
            var tokens: [OAuth2Token] = []
            let delta = try await grantDelta {
                tokens = try await Self.validTokens(100) { try await user.validToken() }
            }
            #expect(delta == ["refresh_token": 1])
            #expect(await user.broker.statistics.renewals == 1)
            let renewed = try #require(tokens.first)
            #expect(tokens.count == 100)
            #expect(tokens.allSatisfy { $0.accessToken == renewed.accessToken })
            #expect(renewed.accessToken != first.accessToken)
            #expect(try await admin.isActive(renewed.accessToken))
            #expect(!(try await admin.isActive(first.accessToken)))
            // The token a request carries is the same one.
            let response = try await user.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
            #expect(response.statusCode == 200)
            #expect(try await user.currentToken()?.accessToken == renewed.accessToken)
        } catch {
            try? await admin.setLifetime(3600)
            throw error
        }
        await access.shutdown()
    }

    @Test func aTokenAnotherBackendRejectedIsRenewedOnceForAHundredReports() async throws {
        let access = try ResourceAccess(configuration: env.configuration())
        let user = access.userClient(for: "u-rejected-elsewhere")
        let first = try await user.authenticate(username: "bob", password: "builder")
        try await admin.expireAll()  // the other backend rejects it, though it has not expired here

        var tokens: [OAuth2Token] = []
        let delta = try await grantDelta {
            tokens = try await Self.validTokens(100) { try await user.validToken(replacingRejected: first) }
        }
        #expect(delta == ["refresh_token": 1])
        let renewed = try #require(tokens.first)
        #expect(tokens.allSatisfy { $0.accessToken == renewed.accessToken })
        #expect(renewed.accessToken != first.accessToken)
        #expect(try await admin.isActive(renewed.accessToken))

        // A report of a token that was already replaced renews nothing.
        var current: OAuth2Token?
        let late = try await grantDelta { current = try await user.validToken(replacingRejected: first) }
        #expect(late.isEmpty)
        #expect(current?.accessToken == renewed.accessToken)
        await access.shutdown()
    }

    @Test func theDeviceTokenIsObtainedOnceAndRenewedOnRejection() async throws {
        let access = try ResourceAccess(configuration: env.configuration())
        var tokens: [OAuth2Token] = []
        let obtained = try await grantDelta {
            tokens = try await Self.validTokens(100) { try await access.deviceClient.validToken() }
        }
        #expect(obtained == ["client_credentials": 1])
        let first = try #require(tokens.first)
        #expect(tokens.allSatisfy { $0.accessToken == first.accessToken })

        let renewed = try await grantDelta {
            tokens = try await Self.validTokens(100) {
                try await access.deviceClient.validToken(replacingRejected: first)
            }
        }
        #expect(renewed == ["client_credentials": 1])
        #expect(Set(tokens.map(\.accessToken)).count == 1)
        #expect(tokens.first?.accessToken != first.accessToken)
        await access.shutdown()
    }

    @Test func noUserMeansATaggedErrorAndNoGrant() async throws {
        let access = try ResourceAccess(configuration: env.configuration())
        let delta = try await grantDelta {
            do {
                _ = try await access.userClient(for: "u-nobody").validToken()
                Issue.record("a token for a user who never signed in")
            } catch let error as CourierError {
                #expect(error.kind == .userNotAuthenticated)
                #expect(error.requestKind == .authenticated)
            }
        }
        #expect(delta.isEmpty)
        await access.shutdown()
    }
}
