import Foundation
import Testing

@testable import Courier

/// The token endpoint never storms: a dead, slow or throttling authorization server, with many
/// callers, against the real servers. Part of the serialized integration suite: the fault
/// modes and token lifetimes are server-wide, and each test resets them before it ends.
extension AuthIntegrationTests {
    /// What many callers saw.
    struct Outcome: Sendable {
        var successes = 0
        var errors: [CourierError] = []
        var otherErrors: [String] = []
    }

    /// `callers` tasks that send device requests, each about every 25 ms, until `duration`
    /// has passed.
    func keepAsking(_ device: DeviceClient, callers: Int, for duration: Duration) async -> Outcome {
        let deadline = ContinuousClock.now + duration
        return await withTaskGroup(of: Outcome.self) { group in
            for _ in 0..<callers {
                group.addTask {
                    var outcome = Outcome()
                    while ContinuousClock.now < deadline {
                        do {
                            let response = try await device.sendAnonymousRequest(
                                ResourceRequest(path: "/api/device/info")
                            )
                            if response.statusCode == 200 { outcome.successes += 1 }
                        } catch let error as CourierError {
                            outcome.errors.append(error)
                        } catch {
                            outcome.otherErrors.append("\(error)")
                        }
                        try? await Task.sleep(for: .milliseconds(25))
                    }
                    return outcome
                }
            }
            return await group.reduce(into: Outcome()) { total, one in
                total.successes += one.successes
                total.errors += one.errors
                total.otherErrors += one.otherErrors
            }
        }
    }

    /// The most attempts a broker may make within `elapsed` of its first failure: one, plus one
    /// per backoff step that fits (each step at least half its nominal length), plus one.
    static func attemptBound(within elapsed: Duration, backoff: RenewalBackoff = RenewalBackoff()) -> Int {
        var attempts = 1
        var time = 0.0
        while true {
            time += backoff.step(afterFailures: attempts).inSeconds / 2
            guard time <= elapsed.inSeconds else { break }
            attempts += 1
        }
        return attempts + 1
    }

    /// Sends device requests until one succeeds (at most `limit`), for the recovery after a fault.
    func untilASuccess(_ device: DeviceClient, limit: Duration = .seconds(40)) async throws -> Int {
        let deadline = ContinuousClock.now + limit
        var failures = 0
        while ContinuousClock.now < deadline {
            if let response = try? await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/info")),
                response.statusCode == 200
            {
                return failures
            }
            failures += 1
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestServersError(message: "no request succeeded within \(limit) after the fault was cleared")
    }

    /// Runs `body`, then clears the token fault and restores the token lifetime, whatever happened.
    func withFaultsReset(_ body: () async throws -> Void) async throws {
        do {
            try await body()
        } catch {
            try? await admin.setTokenFault("none")
            try? await admin.setLifetime(3600)
            throw error
        }
        try await admin.setTokenFault("none")
        try await admin.setLifetime(3600)
    }

    // MARK: Token endpoint faults

    @Test func aDeadTokenEndpointSeesOneAttemptPerBackoffStep() async throws {
        let access = try access()
        try await withFaultsReset {
            try await admin.setTokenFault("down")
            let before = try await admin.tokenRequests()
            let started = ContinuousClock.now
            let outcome = await keepAsking(access.deviceClient, callers: 20, for: .seconds(5))
            let elapsed = ContinuousClock.now - started
            let seen = try await admin.tokenRequests() - before
            let bound = Self.attemptBound(within: elapsed)
            print(
                "[figures] token endpoint down, 20 callers, \(elapsed): \(seen) token requests (bound \(bound)), "
                    + "\(outcome.errors.count) calls failed"
            )
            #expect(seen >= 3)  // it does try again
            #expect(seen <= bound)
            #expect(outcome.successes == 0)
            #expect(outcome.otherErrors.isEmpty)
            #expect(outcome.errors.count > 100)
            #expect(outcome.errors.allSatisfy { $0.kind == .tokenRefreshFailed })
            #expect(outcome.errors.contains { $0.message.contains("next device token renewal attempt is in") })

            // Back up: the next attempt (one request) succeeds.
            try await admin.setTokenFault("none")
            let cleared = try await admin.tokenRequests()
            _ = try await untilASuccess(access.deviceClient)
            #expect(try await admin.tokenRequests() - cleared == 1)
        }
        await access.shutdown()
    }

    @Test func aSlowTokenEndpointIsAskedOnceByTwentyWaitingCallers() async throws {
        let access = try access()
        try await withFaultsReset {
            try await admin.setTokenFault("slow", delayMilliseconds: 1500)
            let before = try await admin.tokenRequests()
            let device = access.deviceClient
            let statuses = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        var statuses: [Int] = []
                        for _ in 0..<3 {
                            statuses.append(
                                try await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
                                    .statusCode
                            )
                        }
                        return statuses
                    }
                }
                return try await group.reduce(into: [Int]()) { $0 += $1 }
            }
            let seen = try await admin.tokenRequests() - before
            print("[figures] token endpoint slow (1.5 s), 20 callers × 3 requests: \(seen) token request(s)")
            #expect(statuses.count == 60)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(seen == 1)
        }
        await access.shutdown()
    }

    @Test(arguments: [(429, false), (503, true)])
    func retryAfterFromTheTokenEndpointIsHonoured(status: Int, asDate: Bool) async throws {
        let access = try access()
        try await withFaultsReset {
            // A date has whole seconds: "3 s from now" may be as little as 2 s away.
            let retryAfter = 3
            let minimumGap = Double(retryAfter) - (asDate ? 1.1 : 0.1)
            try await admin.setTokenFault("\(status)", retryAfter: retryAfter, asDate: asDate)
            let marker = try await admin.tokenRequestTimes().now
            let started = ContinuousClock.now
            let outcome = await keepAsking(access.deviceClient, callers: 20, for: .seconds(7))
            let elapsed = ContinuousClock.now - started
            let times = try await admin.tokenRequestTimes(since: marker).times
            let gaps = zip(times.dropFirst(), times).map { $0 - $1 }
            print(
                "[figures] token endpoint \(status) Retry-After \(retryAfter)\(asDate ? " (date)" : ""), 20 callers, "
                    + "\(elapsed): \(times.count) token requests, gaps \(gaps.map { String(format: "%.2f", $0) })"
            )
            #expect(times.count >= 2)
            #expect(times.count <= Int(elapsed.inSeconds / minimumGap) + 2)
            #expect(gaps.allSatisfy { $0 >= minimumGap })
            #expect(outcome.successes == 0)
            #expect(outcome.errors.allSatisfy { $0.kind == .tokenRefreshFailed && $0.statusCode == status })

            try await admin.setTokenFault("none")
            let cleared = try await admin.tokenRequests()
            _ = try await untilASuccess(access.deviceClient)
            #expect(try await admin.tokenRequests() - cleared == 1)
        }
        await access.shutdown()
    }

    @Test func aTokenInsideItsLeewayIsServedWhileTheEndpointIsDown() async throws {
        let access = try access()
        try await withFaultsReset {
            try await admin.setLifetime(12)  // renewed 6 s before expiry: half the lifetime
            let first = try await access.deviceClient.authenticate()
            let expiresAt = try #require(first.expiresAt)
            try await admin.setTokenFault("down")
            let before = try await admin.tokenRequests()
            // Time is the subject here: wait until the token is inside its leeway.
            let renewAt = expiresAt.addingTimeInterval(-6)
            try await Task.sleep(for: .seconds(max(0, renewAt.timeIntervalSinceNow + 0.2)))
            var statuses: [Int] = []
            while Date() < renewAt.addingTimeInterval(3) {
                statuses.append(
                    try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
                        .statusCode
                )
                try await Task.sleep(for: .milliseconds(100))
            }
            let attempted = try await admin.tokenRequests() - before
            print(
                "[figures] serve stale: \(statuses.count) requests inside the leeway while down, \(attempted) "
                    + "token requests"
            )
            #expect(statuses.count >= 5)
            #expect(statuses.allSatisfy { $0 == 200 })
            #expect(attempted >= 1)
            #expect(attempted <= Self.attemptBound(within: .seconds(3)))
            #expect(try await access.deviceClient.broker.currentToken()?.accessToken == first.accessToken)

            // Back up: a renewal replaces the token.
            try await admin.setTokenFault("none")
            try await admin.setLifetime(3600)
            let delta = try await grantDelta {
                let deadline = Date().addingTimeInterval(40)
                while try await access.deviceClient.broker.currentToken()?.accessToken == first.accessToken,
                    Date() < deadline
                {
                    _ = try? await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
                    try await Task.sleep(for: .milliseconds(50))
                }
            }
            #expect(delta == ["client_credentials": 1])
            #expect(
                try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
                    .statusCode == 200
            )
        }
        await access.shutdown()
    }

    // MARK: Short-lived tokens

    @Test func shortLivedTokensNeverTripTheLoopGuard() async throws {
        let access = try access {
            $0.maximumRenewals = 5
            $0.renewalWindow = .seconds(30)
        }
        try await withFaultsReset {
            try await admin.setLifetime(2)
            try await access.userClient.authenticate(username: "alice", password: "wonderland")
            var failures: [String] = []
            var successes = 0
            let delta = try await grantDelta {
                // One request every 0.5 s for 30 s.
                for _ in 0..<60 {
                    do {
                        let response = try await access.userClient.sendAuthenticatedRequest(
                            ResourceRequest(path: "/api/user/profile")
                        )
                        if response.statusCode == 200 { successes += 1 } else { failures.append("\(response.status)") }
                    } catch {
                        failures.append("\(error)")
                    }
                    try await Task.sleep(for: .milliseconds(500))
                }
            }
            print(
                "[figures] 2 s tokens, 60 requests over 30 s: \(successes) succeeded, \(failures.count) failed, "
                    + "renewals \(delta)"
            )
            #expect(failures.isEmpty)
            #expect(successes == 60)
            #expect(delta["refresh_token", default: 0] >= 10)
        }
        await access.shutdown()
    }
}
