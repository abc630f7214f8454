import Foundation
import HTTPTypes
import Logging
import Testing

@testable import Courier

/// No token, secret, password, Authorization or cookie in any line Courier logs, across an
/// OAuth2 flow against the real authorization server and gateway, token-endpoint traffic
/// included, and in the descriptions of the security types.
@Suite(.timeLimit(.minutes(2)))
struct SecurityLogRedactionTests {
    private struct TokenResponse: Decodable {
        let access_token: String
        let refresh_token: String?
    }

    private func form(_ fields: [(String, String)]) -> RequestBody {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        let text = fields.map { name, value in
            "\(name)=\(value.addingPercentEncoding(withAllowedCharacters: allowed)!)"
        }.joined(separator: "&")
        return .data(Data(text.utf8))
    }

    private func post(
        _ session: Session,
        _ url: URL,
        _ path: String,
        authorization: String? = nil,
        body: RequestBody,
        logger: Logger
    )
        async throws -> Response
    {
        var request = HTTPRequest(method: .post, scheme: url.scheme, authority: "\(url.host!):\(url.port!)", path: path)
        request.headerFields[.contentType] = "application/x-www-form-urlencoded"
        if let authorization { request.headerFields[.authorization] = authorization }
        return try await session.send(request, body: body, logger: logger)
    }

    @Test func noSecretReachesTheLogAcrossAnAuthFlow() async throws {
        let env = try await TestServers.shared()
        let oauth = try #require(env.oauth, "the OAuth2 server did not start: \(env.serviceErrors)")
        let gateway = try #require(env.gateway)
        let capture = CapturingLogHandler()
        var logger = capture.makeLogger()
        logger.logLevel = .trace
        let logging = LoggingMiddleware(logger: logger, level: .info)
        // Token-endpoint traffic: plain HTTP to the test server, so an unpinned session.
        let session = Session(
            configuration: .init(middlewares: [logging]),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )

        let clientSecret = "user-secret"
        let password = "wonderland"
        let basic = "Basic " + Data("courier-user:\(clientSecret)".utf8).base64EncodedString()
        // 1. Password grant, client_secret_basic.
        let first = try await post(
            session,
            oauth,
            "/oauth/token",
            authorization: basic,
            body: form([
                ("grant_type", "password"), ("username", "alice"), ("password", password),
                ("scope", "read write profile"),
            ]),
            logger: logger
        )
        #expect(first.status == .ok)
        let tokens = try JSONDecoder().decode(TokenResponse.self, from: first.data)
        let refresh = try #require(tokens.refresh_token)

        // 2. The resource, with the bearer token and a cookie.
        var resource = HTTPRequest(
            method: .get,
            scheme: "http",
            authority: "\(gateway.host!):\(gateway.port!)",
            path: "/api/user/profile"
        )
        resource.headerFields[.authorization] = "Bearer \(tokens.access_token)"
        resource.headerFields[.cookie] = "session=cookie-\(tokens.access_token.prefix(8))"
        #expect(try await session.send(resource, logger: logger).status == .ok)

        // 3. The token in a query, as some gateways want it.
        let query = HTTPRequest(
            method: .get,
            scheme: "http",
            authority: "\(gateway.host!):\(gateway.port!)",
            path: "/api/headers?access_token=\(tokens.access_token)&client_secret=\(clientSecret)&page=2"
        )
        #expect(try await session.send(query, logger: logger).status == .ok)

        // 4. Refresh, client_secret_post; rotation returns a new refresh token.
        let second = try await post(
            session,
            oauth,
            "/oauth/token",
            body: form([
                ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", "courier-user"),
                ("client_secret", clientSecret),
            ]),
            logger: logger
        )
        #expect(second.status == .ok)
        let rotated = try JSONDecoder().decode(TokenResponse.self, from: second.data)

        // 5. The rotated-out refresh token: an OAuth2 error, logged.
        let reuse = try await post(
            session,
            oauth,
            "/oauth/token",
            authorization: basic,
            body: form([("grant_type", "refresh_token"), ("refresh_token", refresh)]),
            logger: logger
        )
        #expect(reuse.status == .badRequest)

        // 6. Revocation.
        let revoke = try await post(
            session,
            oauth,
            "/oauth/revoke",
            authorization: basic,
            body: form([("token", rotated.refresh_token ?? ""), ("token_type_hint", "refresh_token")]),
            logger: logger
        )
        #expect(revoke.status == .ok)
        await SecuritySupport.close(session)

        // 7. A secured session whose pin fails, with a token attached and logged errors.
        let secured = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [SecuritySupport.unrelatedPin])],
            middlewares: [logging],
            credentials: (rotated.access_token, "session=\(rotated.access_token)")
        )
        await #expect(throws: CourierError(.pinMismatch)) {
            try await secured.send(HTTPRequest(method: .get, path: "/httpbin/headers"), logger: logger)
        }
        await SecuritySupport.close(secured)

        let lines = capture.captured
        #expect(lines.count >= 14)
        #expect(lines.contains { $0.contains("<redacted>") })
        let secrets = [
            clientSecret, password, basic, String(basic.dropFirst(6)), tokens.access_token, refresh,
            rotated.access_token, rotated.refresh_token ?? refresh,
        ]
        for line in lines {
            for secret in secrets {
                #expect(!line.contains(secret), "a secret reached the log: \(line)")
            }
        }
    }

    @Test func securityTypesNeverDescribeASecret() throws {
        let secret = "key-password-\(UUID().uuidString)"
        let identity = ClientCertificate(certificateFile: "/c.pem", privateKeyFile: "/k.pem", password: secret)
        let policy = try TrustPolicy(
            host: "api.example.com",
            pins: [SecuritySupport.unrelatedPin],
            clientCertificate: identity
        )
        var dumped = ""
        dump(policy, to: &dumped)
        for text in [
            String(describing: identity), String(reflecting: identity), String(describing: policy),
            String(reflecting: policy), dumped,
        ] {
            #expect(!text.contains(secret), "\(text)")
        }
    }
}
