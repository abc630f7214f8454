import Foundation
import HTTPTypes
import Testing

@testable import Courier

extension AuthIntegrationTests {
    /// Discovery (RFC 8414 and OpenID Connect) against the real authorization server behind its
    /// TLS front. The server's admin port makes its documents lie (another issuer, endpoints on
    /// another origin) and counts how often they are fetched. Each test has its own cache.
    ///
    /// Nested in ``AuthIntegrationTests``, whose `.serialized` trait covers it: every suite
    /// that talks to the shared authorization server runs alone, so counters are exact.
    @Suite struct DiscoveryIntegrationTests {
        let env: AuthEnvironment
        let admin: OAuthAdmin

        init() async throws {
            env = try await AuthServers.shared()
            admin = OAuthAdmin(env)
        }

        func discover(
            _ issuer: URL? = nil,
            cache: AuthorizationServer.DiscoveryCache = .init(),
            transport: CurlTransport
        ) async throws -> AuthorizationServer {
            try await AuthorizationServer.discover(issuer: issuer ?? env.oauth, transport: transport, cache: cache)
        }

        func withTransport(_ body: (CurlTransport) async throws -> Void) async throws {
            let transport = CurlTransport(configuration: .init(proxy: .none, security: env.security))
            do {
                try await body(transport)
            } catch {
                try? await admin.setMetadata()
                await transport.shutdown()
                throw error
            }
            try await admin.setMetadata()
            await transport.shutdown()
        }

        @Test func fillsTheEndpointsAndServesTheSecondDiscoveryFromTheCache() async throws {
            try await withTransport { transport in
                try await admin.setMetadata(maxAge: 600)
                let before = try await admin.metadataRequests()
                let cache = AuthorizationServer.DiscoveryCache()
                let server = try await discover(cache: cache, transport: transport)
                let origin = env.oauth.absoluteString
                #expect(server.issuer == env.oauth)
                #expect(server.tokenEndpoint.absoluteString == origin + "/oauth/token")
                #expect(server.authorizationEndpoint?.absoluteString == origin + "/oauth/authorize")
                #expect(server.revocationEndpoint?.absoluteString == origin + "/oauth/revoke")
                #expect(server.introspectionEndpoint?.absoluteString == origin + "/oauth/introspect")
                #expect(server.supportedClientAuthentications?.contains(.privateKeyJWT) == true)
                #expect(server.supportedClientAuthentications?.contains(.clientSecretBasic) == true)

                let again = try await discover(cache: cache, transport: transport)
                #expect(again == server)
                let after = try await admin.metadataRequests()
                let path = "/.well-known/oauth-authorization-server"
                #expect(after[path, default: 0] - before[path, default: 0] == 1)

                // The discovered server works: a device token through it.
                var configuration = env.configuration()
                configuration.authorizationServer = server
                let access = try ResourceAccess(configuration: configuration)
                _ = try await access.deviceClient.authenticate()
                await access.shutdown()
            }
        }

        @Test func fallsBackToOpenIDConnectDiscovery() async throws {
            try await withTransport { transport in
                try await admin.setMetadata(oauthMetadata: false)
                let before = try await admin.metadataRequests()
                let server = try await discover(transport: transport)
                #expect(server.tokenEndpoint.absoluteString == env.oauth.absoluteString + "/oauth/token")
                let after = try await admin.metadataRequests()
                let path = "/.well-known/openid-configuration"
                #expect(after[path, default: 0] - before[path, default: 0] == 1)
            }
        }

        @Test func aDocumentForAnotherIssuerIsRefused() async throws {
            try await withTransport { transport in
                try await admin.setMetadata(issuer: "https://login.attacker.example")
                let error = await #expect(throws: CourierError(.invalidConfiguration)) {
                    try await discover(transport: transport)
                }
                #expect(error?.message.contains("https://login.attacker.example") == true)
            }
        }

        @Test func endpointsOutsideTheTrustSetAreRefused() async throws {
            try await withTransport { transport in
                // localhost is the same machine, but not a host of the trust set (127.0.0.1 only).
                let port = env.oauth.port ?? 443
                try await admin.setMetadata(endpointOrigin: "https://localhost:\(port)")
                let error = await #expect(throws: CourierError(.untrustedHost)) {
                    try await discover(transport: transport)
                }
                #expect(error?.message.contains("token_endpoint") == true)
                try await admin.setMetadata(endpointOrigin: env.oauthPlain.absoluteString)
                await #expect(throws: CourierError(.insecureScheme)) { try await discover(transport: transport) }
            }
        }

        @Test func aRefusedDocumentIsNotCached() async throws {
            try await withTransport { transport in
                let cache = AuthorizationServer.DiscoveryCache()
                try await admin.setMetadata(issuer: "https://login.attacker.example")
                await #expect(throws: CourierError(.invalidConfiguration)) {
                    try await discover(cache: cache, transport: transport)
                }
                try await admin.setMetadata()
                let server = try await discover(cache: cache, transport: transport)
                #expect(server.issuer == env.oauth)
            }
        }

        @Test func anIssuerOutsideTheTrustSetIsNeverAsked() async throws {
            try await withTransport { transport in
                let before = try await admin.metadataRequests()
                await #expect(throws: CourierError(.insecureScheme)) {
                    try await discover(env.oauthPlain, transport: transport)
                }
                #expect(try await admin.metadataRequests() == before)
            }
        }
    }
}
