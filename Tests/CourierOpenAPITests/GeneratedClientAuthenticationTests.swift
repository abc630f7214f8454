#if OpenAPI
import Courier
import CourierOpenAPI
import Foundation
import OpenAPIRuntime
import Testing

/// The generated client over secured resource access: the gateway sees the user's token.
@Suite(.timeLimit(.minutes(1)))
struct GeneratedClientAuthenticationTests {
    let servers: OpenAPIServers

    init() async throws {
        servers = try await OpenAPIServers.shared()
    }

    @Test func anAuthenticatedOperationCarriesTheUsersToken() async throws {
        let access = try servers.resourceAccess()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let gateway = Client(
            serverURL: access.configuration.resourceBaseURL,
            transport: CourierClientTransport(userClient: access.userClient)
        )
        let profile = try await gateway.getProfile().ok.body.json
        #expect(profile.username == "alice")
        #expect(profile.clientId == "courier-user")
        #expect(profile.scope.split(separator: " ").contains("read"))
        await access.shutdown()
    }

    @Test func withoutASignedInUserNothingIsSent() async throws {
        let access = try servers.resourceAccess()
        let gateway = Client(
            serverURL: access.configuration.resourceBaseURL,
            transport: CourierClientTransport(userClient: access.userClient)
        )
        let error = await #expect(throws: ClientError.self) { try await gateway.getProfile() }
        let courier = try #require(error?.underlyingError as? CourierError)
        #expect(courier.kind == .userNotAuthenticated)
        #expect(courier.requestKind == .authenticated)
        await access.shutdown()
    }

    @Test func aHostOutsideTheTrustSetGetsNoToken() async throws {
        let access = try servers.resourceAccess()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let elsewhere = Client(
            serverURL: try #require(URL(string: "https://localhost:1")),
            transport: CourierClientTransport(userClient: access.userClient)
        )
        let error = await #expect(throws: ClientError.self) { try await elsewhere.getProfile() }
        let courier = try #require(error?.underlyingError as? CourierError)
        #expect(courier.kind == .untrustedHost)
        await access.shutdown()
    }
}
#endif
