import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Event streams of the secured clients against the real authorization server and the
/// introspecting gateway over pinned TLS: the gateway ends a stream when the token it was opened
/// with expires, so every reconnection must carry a renewed token and resume after the last
/// event. Serialized: some tests change the token lifetime or expire every token at the server.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct AuthEventStreamTests {
    let env: AuthEnvironment
    let admin: OAuthAdmin
    let servers: TestEnvironment

    init() async throws {
        env = try await AuthServers.shared()
        admin = OAuthAdmin(env)
        servers = try await TestServers.shared()
    }

    private func key() -> String { "auth-events-\(UInt64.random(in: 0...UInt64.max))" }

    private func access(leeway: Duration = .seconds(30)) throws -> ResourceAccess {
        var configuration = env.configuration()
        configuration.renewalLeeway = leeway
        return try ResourceAccess(configuration: configuration)
    }

    private static let quick = ServerSentEvents.Configuration(reconnectionDelay: .milliseconds(10))

    @Test func aTokenThatExpiresMidStreamIsRenewedOnReconnectionAndNoEventIsLost() async throws {
        try await admin.setLifetime(2)
        do {
            try await streamAcrossExpiries()
        } catch {
            try? await admin.setLifetime(3600)
            throw error
        }
        try await admin.setLifetime(3600)
    }

    private func streamAcrossExpiries() async throws {
        let access = try access(leeway: .milliseconds(100))
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let key = key()
        let count = 25
        var ids: [String?] = []
        let grants = try await admin.grantDelta {
            for try await event in access.userClient.authenticatedEvents(
                ResourceRequest(path: "/api/events?count=\(count)&interval=200&key=\(key)"),
                configuration: Self.quick
            ) {
                ids.append(event.id)
            }
        }
        #expect(ids == (1...count).map { String($0) }, "no gap, no duplicate")
        let connections = try await servers.gatewayEventConnections(key: key)
        let streamed = connections.filter { $0.status == 200 }
        let expired = streamed.filter { $0.end == "expired" }
        // 25 events 200 ms apart outlive a 2 s token at least twice.
        #expect(expired.count >= 2, "\(connections)")
        #expect(streamed.last?.end == "done")
        #expect(connections.last?.status == 204, "the reconnection after the last event ends the stream")
        // The gateway reads the expiry in whole seconds, rounded down, so it may end a stream up
        // to a second before the client counts the token as expired: such a reconnection is
        // refused once, renews, and goes out again with the new token.
        for (index, connection) in connections.enumerated() where connection.status == 401 {
            #expect(index > 0 && connections[index - 1].token == connection.token, "\(connections)")
            #expect(index + 1 < connections.count && connections[index + 1].token != connection.token)
        }
        #expect(connections.allSatisfy { [200, 204, 401].contains($0.status) }, "\(connections)")
        // Each stream that the token's expiry ended was resumed with a new token, once.
        for (ended, next) in zip(streamed, streamed.dropFirst()) {
            #expect(next.token != ended.token)
        }
        #expect(Set(streamed.compactMap(\.token)).count == streamed.count)
        #expect(grants["refresh_token", default: 0] == expired.count, "\(grants)")
        // The last event ID of each reconnection is the last event of the stream before it.
        var delivered = 0
        for connection in connections {
            #expect(connection.lastEventID == (delivered == 0 ? nil : String(delivered)))
            delivered += connection.events
        }
        await access.shutdown()
    }

    @Test func aRefusedTokenOnReconnectionIsRenewedOnceForEveryStreamWaitingOnIt() async throws {
        let access = try access()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let keys = (0..<3).map { _ in key() }
        let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
        let grants = try await admin.grantDelta {
            try await withThrowingTaskGroup(of: [String?].self) { group in
                for key in keys {
                    group.addTask {
                        var ids: [String?] = []
                        for try await event in access.userClient.authenticatedEvents(
                            ResourceRequest(path: "/api/events?count=6&interval=300&key=\(key)"),
                            configuration: Self.quick
                        ) {
                            ids.append(event.id)
                            if ids.count == 2 { startedContinuation.yield() }
                        }
                        return ids
                    }
                }
                // Every stream is open with the token: the server forgets it. The streams end
                // after their sixth event and reconnect with a token the client still holds valid.
                var iterator = started.makeAsyncIterator()
                for _ in keys { await iterator.next() }
                try await admin.expireAll()
                for try await ids in group { #expect(ids == (1...6).map { String($0) }) }
            }
        }
        #expect(grants["refresh_token", default: 0] == 1, "one renewal for the three streams: \(grants)")
        // A stream that reconnected before the renewal was refused once and waited for it; one
        // that reconnected after it went out with the new token at once.
        var refusals = 0
        for key in keys {
            let connections = try await servers.gatewayEventConnections(key: key)
            let statuses = connections.map(\.status)
            #expect(statuses == [200, 401, 204] || statuses == [200, 204], "\(connections)")
            refusals += statuses.filter { $0 == 401 }.count
            #expect(connections.first?.token != connections.last?.token)
            #expect(connections.dropFirst().allSatisfy { $0.lastEventID == "6" })
            if statuses.count == 3 { #expect(connections[0].token == connections[1].token) }
        }
        #expect(refusals >= 1)
        await access.shutdown()
    }

    @Test func everyKindOfRequestStreamsEventsWithItsOwnCredential() async throws {
        let access = try access()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let request = { (key: String) in ResourceRequest(path: "/api/events?count=3&key=\(key)") }

        let implicitKey = key()
        var implicit: [String?] = []
        for try await event in access.userClient.implicitEvents(request(implicitKey), configuration: Self.quick) {
            implicit.append(event.id)
        }
        #expect(implicit == ["1", "2", "3"])

        let anonymousKey = key()
        var anonymous: [String?] = []
        for try await event in access.deviceClient.anonymousEvents(request(anonymousKey), configuration: Self.quick) {
            anonymous.append(event.id)
        }
        #expect(anonymous == ["1", "2", "3"])
        let implicitToken = try await servers.gatewayEventConnections(key: implicitKey).first?.token
        let anonymousToken = try await servers.gatewayEventConnections(key: anonymousKey).first?.token
        #expect(implicitToken != nil)
        #expect(anonymousToken != nil)
        #expect(implicitToken != anonymousToken)

        // Without a token the gateway refuses the stream: a status, not a reconnection loop.
        let unauthenticatedKey = key()
        let error = await #expect(throws: CourierError.self) {
            for try await _ in access.deviceClient.unauthenticatedEvents(
                request(unauthenticatedKey),
                configuration: Self.quick
            ) {}
        }
        #expect(error?.kind == .clientError)
        #expect(error?.status == .unauthorized)
        #expect(error?.requestKind == .unauthenticated)
        let refused = try await servers.gatewayEventConnections(key: unauthenticatedKey)
        #expect(refused.map(\.status) == [401])
        #expect(refused.first?.token == nil)
        await access.shutdown()
    }
}
