import Foundation
import Testing

@testable import Courier

/// One ResourceAccess acting for many users of the real authorization server (the numbered
/// users `user-N` / `password`), each request checked against the subject the gateway saw.
/// Part of the serialized integration suite: token lifetimes are server-wide.
extension AuthIntegrationTests {
    static let profile = ResourceRequest(path: "/api/user/profile")

    /// The subject the gateway saw for the user's request.
    func subject(of user: UserClient) async throws -> String? {
        let response = try await user.sendAuthenticatedRequest(Self.profile)
        guard response.statusCode == 200 else { return "status \(response.statusCode)" }
        return try json(response)["username"] as? String
    }

    /// For every key in `keys` at once, `body`, whose results come back by key.
    func concurrently<Value: Sendable>(
        _ keys: [Int],
        _ body: @escaping @Sendable (Int) async throws -> Value
    ) async throws -> [Int: Value] {
        try await withThrowingTaskGroup(of: (Int, Value).self) { group in
            for key in keys { group.addTask { (key, try await body(key)) } }
            return try await group.reduce(into: [Int: Value]()) { $0[$1.0] = $1.1 }
        }
    }

    @Test func twoHundredUsersSignInRenewAndLogOutConcurrently() async throws {
        let access = try access()
        let numbers = Array(1...200)
        @Sendable func key(_ n: Int) -> String { "svc-\(n)" }
        @Sendable func name(_ n: Int) -> String { "user-\(n)" }
        try await admin.setLifetime(2)
        do {
            let signIns = try await grantDelta {
                let tokens = try await concurrently(numbers) { n in
                    try await access.userClient(for: key(n)).authenticate(username: name(n), password: "password")
                }
                #expect(tokens.values.allSatisfy { $0.lifetime == 2 })
            }
            #expect(signIns == ["password": 200])
            // Tokens issued from now on outlive the test; the ones the users hold are renewed
            // once each when they are due (half their lifetime after issue).
            try await admin.setLifetime(3600)
            var due = Date()
            for n in numbers {
                let token = try #require(try await access.userClient(for: key(n)).currentToken())
                let renewAt = try #require(token.expiresAt).addingTimeInterval(-1)
                due = max(due, renewAt)
            }
            try await Task.sleep(for: .seconds(due.timeIntervalSinceNow + 0.1))
            let renewals = try await grantDelta {
                let subjects = try await concurrently(numbers) { n in
                    try await subject(of: access.userClient(for: key(n)))
                }
                #expect(numbers.allSatisfy { subjects[$0] == name($0) })
            }
            #expect(renewals == ["refresh_token": 200])
            try await admin.setLifetime(3600)
        } catch {
            try? await admin.setLifetime(3600)
            throw error
        }

        // Half log out while the other half keeps working; then one more logout.
        let leaving = Array(1...100)
        let staying = Array(101...200)
        let outcomes = try await concurrently(numbers) { n -> String? in
            if n <= 100 {
                let report = await access.userClient(for: key(n)).logout()
                return report.isComplete ? name(n) : "logout failed: \(report.failures)"
            }
            return try await subject(of: access.userClient(for: key(n)))
        }
        #expect(numbers.allSatisfy { outcomes[$0] == name($0) })
        for n in leaving.prefix(3) {
            await #expect(throws: CourierError(.userNotAuthenticated)) {
                try await access.userClient(for: key(n)).sendAuthenticatedRequest(Self.profile)
            }
            #expect(await !access.userClient(for: key(n)).isAuthenticated)
        }
        _ = await access.userClient(for: key(101)).logout()
        let stillSignedIn = try await grantDelta {
            let subjects = try await concurrently(Array(staying.dropFirst())) { n in
                try await subject(of: access.userClient(for: key(n)))
            }
            #expect(staying.dropFirst().allSatisfy { subjects[$0] == name($0) })
        }
        #expect(stillSignedIn == [:])
        await access.shutdown()
    }

    @Test func evictedUsersComeBackFromTheStoreWithoutSigningIn() async throws {
        let access = try access { $0.maximumUsersInMemory = 5 }
        let numbers = Array(301...320)
        for n in numbers {
            try await access.userClient(for: "svc-\(n)").authenticate(username: "user-\(n)", password: "password")
        }
        #expect(access.users.count == 5)
        #expect(access.users.evictions == 15)
        let before = try await admin.tokenRequests()
        let delta = try await grantDelta {
            for n in numbers {
                #expect(try await subject(of: access.userClient(for: "svc-\(n)")) == "user-\(n)")
            }
            // And concurrently, with the registry evicting as it goes.
            let subjects = try await concurrently(numbers) { n in
                try await subject(of: access.userClient(for: "svc-\(n)"))
            }
            #expect(numbers.allSatisfy { subjects[$0] == "user-\($0)" })
        }
        #expect(delta == [:])
        #expect(try await admin.tokenRequests() == before)
        #expect(access.users.count <= numbers.count)
        await access.shutdown()
    }
}
