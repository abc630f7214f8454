import Crypto
import Foundation
import HTTPTypes
import Testing
import _CryptoExtras

@testable import Courier

extension AuthIntegrationTests {
    /// JWT client authentication (RFC 7523: `private_key_jwt` RS256 and ES256, `client_secret_jwt`)
    /// against the real authorization server (authlib), over pinned TLS. The server makes the
    /// clients' key pairs at its start; the tests read the private halves from its admin port.
    ///
    /// Nested in ``AuthIntegrationTests``, whose `.serialized` trait covers it: every suite
    /// that talks to the shared authorization server runs alone, so counters are exact.
    @Suite struct ClientAuthenticationIntegrationTests {
        let env: AuthEnvironment
        let admin: OAuthAdmin

        init() async throws {
            env = try await AuthServers.shared()
            admin = OAuthAdmin(env)
        }

        static let secretJWTClient = OAuth2ClientCredentials(
            clientID: "courier-secret-jwt",
            clientSecret: "courier-secret-jwt-test-fixture-secret-0123456789",
            assertion: .clientSecret
        )

        /// The server's key for a client: `private_pem` (PKCS#8) or `private_pem_legacy`.
        func pem(_ clientID: String, legacy: Bool = false) async throws -> (pem: String, kid: String) {
            let keys = try #require(try await admin.clientKeys()[clientID])
            let pem = try #require(keys[legacy ? "private_pem_legacy" : "private_pem"] as? String)
            return (pem, try #require(keys["kid"] as? String))
        }

        func access(deviceClient: OAuth2ClientCredentials) throws -> ResourceAccess {
            var configuration = env.configuration()
            configuration.deviceClient = deviceClient
            return try ResourceAccess(configuration: configuration)
        }

        func counters() async throws -> (accepted: Int, replays: Int) {
            let stats = try await admin.stats()
            return (stats["client_assertions"] as? Int ?? -1, stats["client_assertion_replays"] as? Int ?? -1)
        }

        @Test(arguments: [false, true])
        func privateKeyJWTWithRS256(legacyPEM: Bool) async throws {
            let (pem, kid) = try await pem("courier-jwt-rs256", legacy: legacyPEM)
            #expect(pem.contains(legacyPEM ? "BEGIN RSA PRIVATE KEY" : "BEGIN PRIVATE KEY"))
            let client = OAuth2ClientCredentials(
                clientID: "courier-jwt-rs256",
                privateKey: try .rsa(pem: pem, keyID: kid)
            )
            let access = try access(deviceClient: client)
            let before = try await counters()
            let token = try await access.deviceClient.authenticate()
            #expect(token.scope == ["device"])
            // The token works at the gateway (which introspects it at the server).
            let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
            #expect(response.statusCode == 200)
            let after = try await counters()
            #expect(after.accepted - before.accepted == 1)
            await access.shutdown()
        }

        @Test(arguments: [false, true])
        func privateKeyJWTWithES256FromAFile(legacyPEM: Bool) async throws {
            let (pem, kid) = try await pem("courier-jwt-es256", legacy: legacyPEM)
            #expect(pem.contains(legacyPEM ? "BEGIN EC PRIVATE KEY" : "BEGIN PRIVATE KEY"))
            let file = FileManager.default.temporaryDirectory.appendingPathComponent("courier-es256-\(UUID()).pem").path
            try pem.write(toFile: file, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: file) }
            let client = OAuth2ClientCredentials(
                clientID: "courier-jwt-es256",
                privateKey: try .ecdsaP256(pemFile: file, keyID: kid)
            )
            let access = try access(deviceClient: client)
            let token = try await access.deviceClient.authenticate()
            #expect(!token.accessToken.isEmpty)
            await access.shutdown()
        }

        @Test func aWrongKeyIsRejectedAsClientAuthenticationFailed() async throws {
            for client in [
                OAuth2ClientCredentials(
                    clientID: "courier-jwt-es256",
                    privateKey: try .ecdsaP256(pem: P256.Signing.PrivateKey().pemRepresentation)
                ),
                OAuth2ClientCredentials(
                    clientID: "courier-jwt-rs256",
                    privateKey: try .rsa(pem: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
                ),
                // The RS256 client's real key, but presented as another client's.
                OAuth2ClientCredentials(
                    clientID: "courier-jwt-es256",
                    privateKey: try .rsa(pem: try await pem("courier-jwt-rs256").pem)
                ),
            ] {
                let access = try access(deviceClient: client)
                let error = await #expect(throws: CourierError(.clientAuthenticationFailed)) {
                    try await access.deviceClient.authenticate()
                }
                #expect(error?.oauthError?.code == .invalidClient)
                // Neither the key nor an assertion is in what the error says.
                #expect(error.map { !"\($0)".contains("eyJ") } == true)
                await access.shutdown()
            }
        }

        @Test func everyTokenRequestHasAFreshAssertion() async throws {
            let (pem, kid) = try await pem("courier-jwt-es256")
            let client = OAuth2ClientCredentials(
                clientID: "courier-jwt-es256",
                privateKey: try .ecdsaP256(pem: pem, keyID: kid)
            )
            let transport = CurlTransport(configuration: .init(proxy: .none, security: env.security))
            let endpoint = TokenEndpoint(server: env.authorizationServer, client: client, transport: transport)
            let before = try await counters()
            // The server refuses a jti it has seen (next test), so three grants mean three jtis.
            for _ in 0..<3 {
                _ = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
            }
            let after = try await counters()
            #expect(after.accepted - before.accepted == 3)
            #expect(after.replays == before.replays)
            await transport.shutdown()
        }

        @Test func theServerRefusesAReplayedAssertion() async throws {
            // One assertion, sent twice by hand to the plain port (whose origin is its audience).
            let (pem, _) = try await pem("courier-jwt-es256")
            let assertion = try ClientAssertionJWT(
                signer: .privateKey(try .ecdsaP256(pem: pem)),
                clientID: "courier-jwt-es256",
                audience: env.oauthPlain.absoluteString + "/oauth/token"
            ).make()
            let form = [
                "grant_type": "client_credentials",
                "client_assertion_type": ClientAssertionJWT.assertionType,
                "client_assertion": assertion,
            ]
            let before = try await counters()
            let first = try await admin.json(.post, "/oauth/token", form: form)
            #expect(first["access_token"] != nil)
            await #expect(throws: TestServersError.self) { try await admin.json(.post, "/oauth/token", form: form) }
            let after = try await counters()
            #expect(after.replays - before.replays == 1)
        }

        @Test func clientSecretJWT() async throws {
            let access = try access(deviceClient: Self.secretJWTClient)
            let token = try await access.deviceClient.authenticate()
            #expect(token.scope == ["device"])
            await access.shutdown()

            var wrong = Self.secretJWTClient
            wrong.clientSecret = "another-secret-that-is-also-long-enough-000000"
            let refused = try self.access(deviceClient: wrong)
            await #expect(throws: CourierError(.clientAuthenticationFailed)) {
                try await refused.deviceClient.authenticate()
            }
            await refused.shutdown()
        }

        @Test func aClientSecretJWTClientWithoutASecretIsRefusedAtConfiguration() async throws {
            #expect(throws: CourierError(.invalidConfiguration)) {
                try self.access(
                    deviceClient: OAuth2ClientCredentials(
                        clientID: "courier-secret-jwt",
                        clientSecret: nil,
                        assertion: .clientSecret
                    )
                )
            }
        }
    }
}
