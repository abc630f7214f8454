import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Certificate-bound tokens (RFC 8705) against the real authorization server and gateway,
/// behind an nginx that verifies client certificates of the suite's client CA and forwards
/// them: the server binds a token to the certificate its request presented, and the gateway
/// refuses it over a connection without that certificate. Serialized: counts are compared as
/// deltas, and the metadata document is shared.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct CertificateBoundTokenIntegrationTests {
    let env: AuthEnvironment
    let servers: TestEnvironment
    let admin: OAuthAdmin
    let gatewayAdmin: Session

    init() async throws {
        env = try await AuthServers.shared()
        servers = try await TestServers.shared()
        admin = OAuthAdmin(env)
        gatewayAdmin = Session(
            configuration: .init(baseURL: env.gatewayPlain),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        try await admin.setMetadata()
    }

    // MARK: Support

    /// A new client certificate of the suite's client CA.
    func certificate(_ name: String) throws -> ClientCertificate {
        try TrustRotationSupport.clientCertificate(servers, name: name, days: 2)
    }

    /// The `x5t#S256` of a PEM certificate file, computed here: base64url of its DER's SHA-256.
    func thumbprint(_ certificate: ClientCertificate) throws -> String {
        let pem = try String(contentsOfFile: certificate.certificateFile, encoding: .utf8)
        let body = pem.components(separatedBy: "-----END CERTIFICATE-----")[0]
            .components(separatedBy: "-----BEGIN CERTIFICATE-----")[1]
            .filter { !$0.isWhitespace }
        let der = try #require(Data(base64Encoded: body))
        return Data(SHA256.hash(data: der)).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Trust for the suite's servers, presenting `certificate` to every port of 127.0.0.1, or
    /// `tokenEndpoint` to the authorization server's ports and `resources` to the gateway's.
    func security(
        presenting certificate: ClientCertificate?,
        toGateway resources: ClientCertificate? = nil
    ) throws -> SecurityConfiguration {
        guard let resources else {
            return try .secured(trust: [
                try TrustPolicy(
                    host: "127.0.0.1",
                    pins: env.pins,
                    pinnedCertificateAuthorities: env.caBundle,
                    clientCertificate: certificate
                )
            ])
        }
        return try .secured(trust: [
            try TrustPolicy(
                host: "127.0.0.1",
                port: env.gateway.port,
                pins: env.pins,
                pinnedCertificateAuthorities: env.caBundle,
                clientCertificate: resources
            ),
            try TrustPolicy(
                host: "127.0.0.1",
                pins: env.pins,
                pinnedCertificateAuthorities: env.caBundle,
                clientCertificate: certificate
            ),
        ])
    }

    /// Resource access whose authorization server binds tokens, on a transport of its own.
    func access(_ security: SecurityConfiguration) throws -> (ResourceAccess, CurlTransport) {
        var configuration = env.configuration()
        configuration.authorizationServer.issuesCertificateBoundTokens = true
        configuration.transport = .init(proxy: .none, security: security)
        let transport = CurlTransport(configuration: configuration.transport)
        return (try ResourceAccess(configuration: configuration, transport: transport), transport)
    }

    func gatewayStats() async throws -> [String: Any] {
        let response = try await gatewayAdmin.send(HTTPRequest(method: .get, path: "/admin/stats"))
        return try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
    }

    /// The gateway's refusals of a bound token over a connection without its certificate, and
    /// its 401 answers.
    func refusals() async throws -> (certificate: Int, unauthorized: Int, total: Int) {
        let stats = try await gatewayStats()
        return (
            stats["certificate_refusals"] as? Int ?? 0,
            (stats["by_outcome"] as? [String: Int])?["401"] ?? 0,
            stats["requests_total"] as? Int ?? 0
        )
    }

    func introspectedCertificate(_ token: OAuth2Token) async throws -> String? {
        let answer = try await admin.json(
            .post,
            "/oauth/introspect",
            form: ["token": token.accessToken, "client_id": "gateway", "client_secret": "gateway-secret"]
        )
        return (answer["cnf"] as? [String: Any])?["x5t#S256"] as? String
    }

    /// A transport that puts a copied token on every request below the session's screens,
    /// which would refuse an `Authorization` set by hand: what someone who copied the token
    /// and holds some client certificate could send.
    struct CopiedTokenTransport: Transport {
        let inner: CurlTransport
        let authorization: String

        var security: SecurityConfiguration { inner.security }

        func execute(
            _ request: HTTPRequest,
            body: RequestBody?,
            options: TransferOptions,
            control: TransferControl
        ) async throws -> Response {
            var request = request
            request.headerFields[.authorization] = authorization
            return try await inner.execute(request, body: body, options: options, control: control)
        }

        func shutdown() async { await inner.shutdown() }
    }

    /// Sends `token` by hand over a connection presenting `certificate`, or none.
    func sendByHand(_ token: OAuth2Token, presenting certificate: ClientCertificate?) async throws -> Response {
        let inner = CurlTransport(configuration: .init(proxy: .none, security: try security(presenting: certificate)))
        let session = Session(
            configuration: .init(baseURL: env.gateway),
            transport: CopiedTokenTransport(inner: inner, authorization: token.authorizationValue)
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/api/device/info"))
        await session.shutdown()
        return response
    }

    let info = ResourceRequest(path: "/api/device/info")

    // MARK: Tests

    @Test func aTokenIsBoundToTheCertificateOfItsRequestAndAcceptedWithIt() async throws {
        let certificate = try certificate("bound-a")
        let (access, transport) = try access(try security(presenting: certificate))
        let before = try await refusals()
        #expect(try await access.deviceClient.sendAnonymousRequest(info).statusCode == 200)
        let token = try #require(try await access.deviceClient.broker.currentToken())
        #expect(token.certificateThumbprint == (try thumbprint(certificate)))
        #expect(try await introspectedCertificate(token) == (try thumbprint(certificate)))
        let after = try await refusals()
        #expect(after.certificate == before.certificate)
        #expect(after.unauthorized == before.unauthorized)
        await access.shutdown()
        await transport.shutdown()
    }

    @Test func aBoundTokenIsRefusedWithAnotherCertificateOrNone() async throws {
        let first = try certificate("bound-first")
        let second = try certificate("bound-second")
        let (access, transport) = try access(try security(presenting: first))
        let token = try await access.deviceClient.authenticate()
        let before = try await refusals()
        #expect(try await sendByHand(token, presenting: first).statusCode == 200)
        #expect(try await sendByHand(token, presenting: second).statusCode == 401)
        #expect(try await sendByHand(token, presenting: nil).statusCode == 401)
        #expect(try await refusals().certificate - before.certificate == 2)
        await access.shutdown()
        await transport.shutdown()
    }

    @Test func aRotatedCertificateRenewsTheTokenOnceAndTheOldOneIsNeverSentWithIt() async throws {
        let first = try certificate("rotated-first")
        let second = try certificate("rotated-second")
        let (access, transport) = try access(try security(presenting: first))
        #expect(try await access.deviceClient.sendAnonymousRequest(info).statusCode == 200)
        let old = try #require(try await access.deviceClient.broker.currentToken())
        let before = try await refusals()
        let delta = try await admin.grantDelta {
            // Requests under the old certificate are in flight when the trust changes; those
            // that start after it present the new one and must not carry the old token.
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<200 {
                    if index == 100 { try transport.replaceTrust(with: try security(presenting: second)) }
                    group.addTask { try await access.deviceClient.sendAnonymousRequest(info).statusCode }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            #expect(statuses.count == 200)
            #expect(statuses.allSatisfy { $0 == 200 })
        }
        #expect(delta == ["client_credentials": 1])
        let renewed = try #require(try await access.deviceClient.broker.currentToken())
        #expect(renewed.accessToken != old.accessToken)
        #expect(renewed.certificateThumbprint == (try thumbprint(second)))
        #expect(try await introspectedCertificate(renewed) == (try thumbprint(second)))
        let after = try await refusals()
        #expect(after.certificate == before.certificate)
        #expect(after.unauthorized == before.unauthorized)
        await access.shutdown()
        await transport.shutdown()
    }

    @Test func aStoredTokenOfAnotherCertificateIsRenewedNotSent() async throws {
        let store = InMemoryTokenStore()
        let first = try certificate("stored-first")
        let second = try certificate("stored-second")
        var configuration = env.configuration(tokenStore: store)
        configuration.authorizationServer.issuesCertificateBoundTokens = true
        configuration.transport = .init(proxy: .none, security: try security(presenting: first))
        let earlier = try ResourceAccess(configuration: configuration)
        let stored = try await earlier.deviceClient.authenticate()
        #expect(stored.certificateThumbprint == (try thumbprint(first)))
        await earlier.shutdown()

        configuration.transport = .init(proxy: .none, security: try security(presenting: second))
        let later = try ResourceAccess(configuration: configuration)
        let before = try await refusals()
        let delta = try await admin.grantDelta {
            let response = try await later.deviceClient.sendAnonymousRequest(info)
            #expect(response.statusCode == 200)
        }
        #expect(delta == ["client_credentials": 1])
        #expect(try await later.deviceClient.broker.currentToken()?.certificateThumbprint == (try thumbprint(second)))
        let after = try await refusals()
        #expect(after.certificate == before.certificate)
        #expect(after.unauthorized == before.unauthorized)
        await later.shutdown()
    }

    @Test func differentCertificatesForTheTokenEndpointAndTheResourceFailBeforeSending() async throws {
        let (access, transport) = try access(
            try security(presenting: try certificate("endpoint-a"), toGateway: try certificate("gateway-b"))
        )
        let before = try await refusals()
        let error = await #expect(throws: CourierError(.invalidConfiguration)) {
            try await access.deviceClient.sendAnonymousRequest(info)
        }
        #expect(error?.host == "127.0.0.1")
        #expect(error?.message.contains("client certificate") == true)
        // Nothing reached the gateway: not the first token, not the renewed one.
        #expect(try await refusals().total == before.total)
        await access.shutdown()
        await transport.shutdown()
    }

    @Test func discoveryUsesTheMutualTLSAliasesWhenTheTransportPresentsACertificate() async throws {
        try await admin.setMetadata(mutualTLSOrigin: env.oauthMutualTLS.absoluteString)
        defer { Task { [admin] in try? await admin.setMetadata() } }
        let cache = AuthorizationServer.DiscoveryCache()
        let certificate = try certificate("discovered")
        let presenting = CurlTransport(
            configuration: .init(proxy: .none, security: try security(presenting: certificate))
        )
        let server = try await AuthorizationServer.discover(issuer: env.oauth, transport: presenting, cache: cache)
        #expect(server.tokenEndpoint.absoluteString == env.oauthMutualTLS.absoluteString + "/oauth/token")
        #expect(server.revocationEndpoint?.absoluteString == env.oauthMutualTLS.absoluteString + "/oauth/revoke")
        #expect(server.issuesCertificateBoundTokens)

        let plain = CurlTransport(configuration: .init(proxy: .none, security: env.security))
        let unaliased = try await AuthorizationServer.discover(issuer: env.oauth, transport: plain, cache: cache)
        #expect(unaliased.tokenEndpoint.absoluteString == env.oauth.absoluteString + "/oauth/token")

        // The alias requires the certificate, and the token it issues is bound to it.
        var configuration = env.configuration()
        configuration.authorizationServer = server
        let access = try ResourceAccess(configuration: configuration, transport: presenting)
        #expect(try await access.deviceClient.sendAnonymousRequest(info).statusCode == 200)
        let token = try #require(try await access.deviceClient.broker.currentToken())
        #expect(token.certificateThumbprint == (try thumbprint(certificate)))
        await access.shutdown()
        await presenting.shutdown()
        await plain.shutdown()
        try await admin.setMetadata()
    }
}
