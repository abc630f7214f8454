import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The Hummingbird service of `Examples/CourierService`, built by `scripts/build-examples.sh`,
/// run as a real process against the authorization server and the gateway behind pinned TLS,
/// and driven over HTTP with Courier as its client: many users at once, each with their own
/// tokens; a 64 MiB download streamed through it in flat memory; the device token; a user who
/// is not signed in. Every test stops the service with SIGTERM and expects a clean exit.
/// Serialized: the memory measurement must not see another test's load.
@Suite(.serialized, .timeLimit(.minutes(5)))
struct ServiceExampleTests {
    let env: AuthEnvironment

    init() async throws {
        env = try await AuthServers.shared()
    }

    static let userID = HTTPField.Name("X-User-ID")!

    /// A plain client for the service (HTTP on loopback).
    static func client(_ service: ExampleServiceProcess) -> Session {
        exampleClient(service)
    }

    static func signIn(_ client: Session, user: String, username: String, password: String) async throws -> Response {
        let body = try JSONSerialization.data(withJSONObject: ["username": username, "password": password])
        return try await client.send(
            HTTPRequest(
                method: .post,
                path: "/session",
                headerFields: [.contentType: "application/json", userID: user]
            ),
            body: .data(body)
        )
    }

    static func get(_ client: Session, _ path: String, user: String? = nil) async throws -> Response {
        var request = HTTPRequest(method: .get, path: path)
        if let user { request.headerFields[userID] = user }
        return try await client.send(request)
    }

    static func json(_ response: Response) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
    }

    /// Users of the test authorization server, under the service's own ids for them.
    static let users: [(id: String, username: String, password: String)] =
        [("account-1", "alice", "wonderland"), ("account-2", "bob", "builder")]
        + (3...8).map { ("account-\($0)", "user-\($0)", "password") }

    @Test func concurrentUsersEachGetTheirOwnProfile() async throws {
        try await withExampleService(env) { service, client in

            try await withThrowingTaskGroup(of: Void.self) { group in
                for user in Self.users {
                    group.addTask {
                        let response = try await Self.signIn(
                            client,
                            user: user.id,
                            username: user.username,
                            password: user.password
                        )
                        #expect(response.statusCode == 204, "\(user.username): \(response.text ?? "")")
                    }
                }
                try await group.waitForAll()
            }

            // 25 requests per user, all at once, each answered with its own user's profile.
            let perUser = 25
            let answered = try await withThrowingTaskGroup(of: Int.self) { group in
                for round in 0..<perUser {
                    for user in Self.users {
                        group.addTask {
                            let response = try await Self.get(client, "/profile", user: user.id)
                            #expect(response.statusCode == 200, "round \(round), \(user.id): \(response.text ?? "")")
                            #expect(response.headerFields[.contentType] == "application/json")
                            let profile = try Self.json(response)
                            #expect(profile["username"] as? String == user.username)
                            #expect(profile["client_id"] as? String == AuthEnvironment.userClient.clientID)
                            return 1
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(answered == perUser * Self.users.count)

            let alice = try Self.json(try await Self.get(client, "/profile", user: "account-1"))
            #expect(alice["name"] as? String == "Alice Liddell")

            // A user the service has never signed in, a wrong password, and a sign-out.
            let stranger = try await Self.get(client, "/profile", user: "account-unknown")
            #expect(stranger.statusCode == 401)
            #expect(stranger.text?.contains("not signed in") == true)
            let wrong = try await Self.signIn(client, user: "account-9", username: "alice", password: "nope")
            #expect(wrong.statusCode == 401)
            #expect(try await Self.get(client, "/profile", user: "account-9").statusCode == 401)

            let signOut = try await client.send(
                HTTPRequest(method: .delete, path: "/session", headerFields: [Self.userID: "account-2"])
            )
            #expect(signOut.statusCode == 204)
            #expect(try await Self.get(client, "/profile", user: "account-2").statusCode == 401)
            #expect(try await Self.get(client, "/profile", user: "account-3").statusCode == 200)

            #expect(try await Self.get(client, "/profile").statusCode == 400)
        }
    }

    @Test func downloadStreamsThroughTheServiceInFlatMemory() async throws {
        try await withExampleService(env) { service, client in
            let signIn = try await Self.signIn(client, user: "account-1", username: "alice", password: "wonderland")
            #expect(signIn.statusCode == 204)
            // A small download first, so that the peak before the large one includes every
            // connection and token the service needs.
            #expect(try await Self.get(client, "/download?bytes=1000", user: "account-1").data.count == 1000)
            let before = try service.memory("VmHWM")

            let size = 64 << 20
            var request = HTTPRequest(method: .get, path: "/download?bytes=\(size)")
            request.headerFields[Self.userID] = "account-1"
            let response = try await client.stream(request)
            #expect(response.statusCode == 200)
            #expect(response.headerFields[.contentType] == "application/octet-stream")
            #expect(response.headerFields[.contentLength] == String(size))
            var hasher = SHA256()
            var received = 0
            var chunks = 0
            for try await chunk in response.body {
                hasher.update(data: chunk)
                received += chunk.count
                chunks += 1
                // A caller slower than the upstream (at most about 64 MB/s): the service must
                // slow the upstream down rather than hold what the caller has not taken.
                if chunks % 4 == 0 { try await Task.sleep(for: .milliseconds(1)) }
            }
            #expect(received == size)
            #expect(
                hasher.finalize().hex
                    == AuthStreamedRequestTests.patternDigest(size)
            )

            // Flat, the peak grows by about a MiB: Courier's stream buffer (1 MiB) and a chunk in
            // Hummingbird's channel. Holding the body anywhere would add up to 64 MiB.
            let peak = try service.memory("VmHWM")
            print("courier-service: peak RSS \(before >> 10) KiB before, \(peak >> 10) KiB after streaming 64 MiB")
            #expect(peak - before < 16 << 20, "the peak RSS grew by \((peak - before) >> 20) MiB")
        }
    }

    @Test func deviceRouteUsesTheDeviceToken() async throws {
        try await withExampleService(env) { service, client in
            let health = try await Self.get(client, "/health")
            #expect(health.statusCode == 200)
            let device = try await Self.get(client, "/device")
            #expect(device.statusCode == 200)
            let info = try Self.json(device)
            #expect(info["client_id"] as? String == AuthEnvironment.deviceClient.clientID)
            #expect(info["scope"] as? String == "device")
            #expect(info["username"] == nil)
        }
    }

    @Test func theServiceEndsWhenItsParentGoes() async throws {
        let service = try await ExampleServiceProcess.start(env)
        let client = Self.client(service)
        #expect(try await Self.get(client, "/health").statusCode == 200)
        await client.shutdown()
        // What the kernel does when this process dies: the write end of its stdin closes.
        try await service.closeStandardInput()
        #expect(service.process.terminationReason == .exit)
        #expect(service.process.terminationStatus == 0, "\(service.log.suffix(4000))")
    }
}
