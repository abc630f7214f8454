import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The wire formats: token and error responses, client authentication, PKCE, challenges, Digest.
@Suite(.timeLimit(.minutes(1)))
struct AuthProtocolTests {
    // MARK: Token endpoint requests

    @Test func basicClientAuthenticationFormEncodesIdAndSecretFirst() async throws {
        let client = OAuth2ClientCredentials(clientID: "my app", clientSecret: "p@ss:word")
        let (endpoint, transport) = AuthFixtures.endpoint(client: client) { _, _ in
            AuthFixtures.json(
                .ok,
                #"{"access_token":"a","token_type":"bearer","expires_in":"60","scope":["read","write"]}"#
            )
        }
        let token = try await endpoint.requestToken(
            grantType: .clientCredentials,
            parameters: [("scope", "read write")]
        )
        let sent = try #require(transport.requests.first)
        // RFC 6749 §2.3.1: form-encode, then join with ":" and base64.
        let expected = "Basic " + Data("my+app:p%40ss%3Aword".utf8).base64EncodedString()
        #expect(sent.request.headerFields[.authorization] == expected)
        #expect(sent.request.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(sent.request.method == .post)
        #expect(sent.request.path == "/oauth/token")
        #expect(AuthFixtures.form(sent.body) == ["grant_type": "client_credentials", "scope": "read write"])
        #expect(token.accessToken == "a")
        #expect(token.tokenType == .bearer)
        #expect(token.scope == [.read, .write])
        #expect(token.lifetime == 60)
    }

    @Test func bodyAndPublicClientAuthenticationUseTheForm() async throws {
        for (client, expected) in [
            (
                OAuth2ClientCredentials(clientID: "c", clientSecret: "s", authentication: .body),
                ["client_id": "c", "client_secret": "s"]
            ),
            (OAuth2ClientCredentials(clientID: "public"), ["client_id": "public"]),
        ] {
            let (endpoint, transport) = AuthFixtures.endpoint(client: client) { _, _ in
                AuthFixtures.json(.ok, #"{"access_token":"a","token_type":"Bearer"}"#)
            }
            _ = try await endpoint.requestToken(
                grantType: .password,
                parameters: [("username", "u"), ("password", "p w")]
            )
            let sent = try #require(transport.requests.first)
            #expect(sent.request.headerFields[.authorization] == nil)
            var form = AuthFixtures.form(sent.body)
            #expect(form.removeValue(forKey: "password") == "p w")
            #expect(form == ["grant_type": "password", "username": "u"].merging(expected) { $1 })
        }
    }

    @Test(
        arguments: [
            (
                400,
                #"{"error":"invalid_grant","error_description":"Invalid refresh token.","error_uri":"https://e.example/doc"}"#,
                CourierError.Kind.grantRejected, "invalid_grant"
            ),
            (
                401, #"{"error": "invalid_client", "error_description": "bad secret"}"#, .clientAuthenticationFailed,
                "invalid_client"
            ),
            (400, #"{"error": "invalid_scope"}"#, .grantRejected, "invalid_scope"),
            (401, "", .clientAuthenticationFailed, nil),
            (503, "<html>down</html>", .tokenRefreshFailed, nil),
        ] as [(Int, String, CourierError.Kind, String?)]
    )
    func errorResponsesBecomeTypedErrors(status: Int, body: String, kind: CourierError.Kind, code: String?) async throws
    {
        let (endpoint, _) = AuthFixtures.endpoint { _, _ in AuthFixtures.json(HTTPResponse.Status(code: status), body) }
        let error = await #expect(throws: CourierError.self) {
            try await endpoint.requestToken(grantType: .refreshToken, parameters: [("refresh_token", "r")])
        }
        #expect(error?.kind == kind)
        #expect(error?.statusCode == status)
        #expect(error?.endpoint == "POST /oauth/token")
        #expect(error?.oauthError?.code.rawValue == code)
        if code == "invalid_grant" {
            #expect(error?.oauthError?.errorDescription == "Invalid refresh token.")
            #expect(error?.oauthError?.errorURI == URL(string: "https://e.example/doc"))
        }
        #expect(!(error?.description.contains("r") == true && error?.description.contains("refresh_token=") == true))
    }

    @Test func malformedSuccessResponsesAreRefused() async throws {
        for body in [#"{"token_type":"Bearer"}"#, "not json", #"{"access_token":"a","token_type":"mac"}"#] {
            let (endpoint, _) = AuthFixtures.endpoint { _, _ in AuthFixtures.json(.ok, body) }
            await #expect(throws: CourierError(.invalidTokenResponse)) {
                try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
            }
        }
    }

    /// Found by FuzzTokenResponse: `"expires_in":"inf"` made a token whose expiry could not be
    /// encoded (so never stored) and whose renewal date was infinite.
    @Test(arguments: [#""inf""#, #""nan""#, #""1e999""#, "1e308", "4000000000"])
    func anUnusableOrHugeLifetimeGivesAFiniteStorableToken(expiresIn: String) async throws {
        let body = #"{"token_type":"Bearer","access_token":"bcQO","expires_in":"# + expiresIn + #","scope":"urnt"}"#
        let (endpoint, _) = AuthFixtures.endpoint { _, _ in AuthFixtures.json(.ok, body) }
        let token = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        if let expiry = token.expiresAt {
            // One second for the rounding of Date arithmetic.
            #expect(expiry.timeIntervalSince(token.issuedAt) <= TokenEndpoint.maximumLifetimeSeconds + 1)
        }
        #expect(token.renewalDate(leeway: .seconds(30)).map { $0.timeIntervalSinceNow.isFinite } ?? true)
        #expect(try JSONDecoder().decode(OAuth2Token.self, from: JSONEncoder().encode(token)) == token)
    }

    @Test func aTokenRequestToAnUntrustedHostIsRefusedBeforeSending() async throws {
        let transport = MockTransport(security: AuthFixtures.security) { _, _ in
            AuthFixtures.json(.ok, #"{"access_token":"a"}"#)
        }
        let endpoint = TokenEndpoint(
            server: AuthorizationServer(baseURL: URL(string: "https://evil.example")!),
            client: AuthFixtures.client,
            transport: transport
        )
        let error = await #expect(throws: CourierError(.untrustedHost)) {
            try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        }
        #expect(error?.host == "evil.example")
        #expect(error?.endpoint == "POST /oauth/token")
        #expect(transport.requests.isEmpty)
    }

    @Test func refreshKeepsTheRefreshTokenWhenTheServerSendsNoNewOne() async throws {
        let (endpoint, transport) = AuthFixtures.endpoint { _, _ in
            AuthFixtures.json(.ok, #"{"access_token":"new","token_type":"Bearer","expires_in":10}"#)
        }
        let current = OAuth2Token(accessToken: "old", refreshToken: "keep-me", scope: [.read, .profile])
        let token = try await RefreshTokenGrant().obtainToken(
            GrantContext(
                level: .user,
                current: current,
                reason: .expired,
                endpoint: endpoint,
                logger: Session.silentLogger
            )
        )
        #expect(token.refreshToken == "keep-me")
        #expect(token.scope == [.read, .profile])
        #expect(AuthFixtures.form(transport.requests.first?.body)["refresh_token"] == "keep-me")
    }

    @Test func revocationSendsTheTokenAndHint() async throws {
        let (endpoint, transport) = AuthFixtures.endpoint { _, _ in AuthFixtures.json(.ok, "{}") }
        try await endpoint.revoke("tok", hint: .refreshToken)
        let sent = try #require(transport.requests.first)
        #expect(sent.request.path == "/oauth/revoke")
        #expect(AuthFixtures.form(sent.body) == ["token": "tok", "token_type_hint": "refresh_token"])

        let (refusing, _) = AuthFixtures.endpoint { _, _ in
            AuthFixtures.json(.badRequest, #"{"error":"unsupported_token_type"}"#)
        }
        let error = await #expect(throws: CourierError(.revocationFailed)) { try await refusing.revoke("tok") }
        #expect(error?.oauthError?.code == .unsupportedTokenType)
    }

    // MARK: Token model

    @Test func tokensNeverShowTheirSecrets() throws {
        let token = OAuth2Token(accessToken: "SECRET-A", refreshToken: "SECRET-R", scope: [.read])
        #expect(!token.description.contains("SECRET"))
        #expect(!"\(PasswordGrant(username: "u", password: "SECRET-P"))".contains("SECRET"))
        #expect(!"\(OAuth2ClientCredentials(clientID: "c", clientSecret: "SECRET-S"))".contains("SECRET"))
        #expect(token.authorizationValue == "Bearer SECRET-A")
    }

    @Test func tokensRoundTripThroughCodable() throws {
        let token = OAuth2Token(
            accessToken: "a",
            issuedAt: Date(timeIntervalSince1970: 100),
            expiresAt: Date(timeIntervalSince1970: 160),
            refreshToken: "r",
            scope: [.read, .write],
            issuedTokenType: "urn:x",
            additionalFields: ["id_token": "i"]
        )
        let decoded = try JSONDecoder().decode(OAuth2Token.self, from: JSONEncoder().encode(token))
        #expect(decoded == token)
    }

    // MARK: PKCE and authorization redirects

    @Test func pkceMatchesRFC7636AppendixB() {
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        #expect(pkce.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM")
        #expect(pkce.method == "S256")
        let fresh = PKCE()
        #expect(fresh.verifier.count == 43)
        #expect(fresh.verifier.allSatisfy { $0.isLetter || $0.isNumber || "-._~".contains($0) })
        #expect(PKCE().verifier != fresh.verifier)
    }

    @Test func theRedirectMustCarryTheSameStateAndGoToTheRedirectURI() throws {
        let redirect = URL(string: "http://127.0.0.1/callback")!
        func code(_ url: String) throws -> String {
            try AuthorizationCodeGrant.code(
                from: URL(string: url)!,
                expectedRedirect: redirect,
                state: "S1",
                level: .user
            )
        }
        #expect(try code("http://127.0.0.1:53100/callback?code=abc&state=S1") == "abc")
        #expect(throws: CourierError(.invalidAuthorizationResponse)) {
            try code("http://127.0.0.1/callback?code=abc&state=S2")
        }
        #expect(throws: CourierError(.invalidAuthorizationResponse)) {
            try code("http://127.0.0.1/callback?code=abc")
        }
        #expect(throws: CourierError(.invalidAuthorizationResponse)) {
            try code("http://evil.example/callback?code=abc&state=S1")
        }
        let denied = #expect(throws: CourierError(.authorizationDenied)) {
            try code("http://127.0.0.1/callback?error=access_denied&error_description=No+user&state=S1")
        }
        #expect(denied?.oauthError?.code == .accessDenied)
        #expect(denied?.oauthError?.errorDescription == "No user")
    }

    @Test func theAuthorizationURLCarriesPKCEAndState() throws {
        let grant = AuthorizationCodeGrant(
            redirectURI: URL(string: "courier://callback")!,
            scope: [.read, .profile],
            additionalAuthorizationParameters: [("login_hint", "alice")]
        ) { $0 }
        let pkce = PKCE(verifier: "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")
        let url = grant.authorizationURL(
            endpoint: URL(string: "https://as.example/authorize")!,
            clientID: "c",
            state: "st",
            pkce: pkce
        )
        let items = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.queryItems)
        let query = Dictionary(
            uniqueKeysWithValues: items.map { ($0.name, $0.value?.replacingOccurrences(of: "+", with: " ") ?? "") }
        )
        #expect(
            query == [
                "response_type": "code", "client_id": "c", "redirect_uri": "courier://callback",
                "scope": "profile read",
                "state": "st", "code_challenge": pkce.challenge, "code_challenge_method": "S256", "login_hint": "alice",
            ]
        )
    }

    // MARK: Challenges

    @Test func challengeListsAreSplitIntoChallengesAndParameters() {
        let challenges = AuthenticationChallenge.parse(
            #"Newauth realm="apps", type=1, title="Login to \"apps\"", Basic realm="simple", Bearer abc123=="#
        )
        #expect(challenges.map(\.scheme) == ["Newauth", "Basic", "Bearer"])
        #expect(challenges[0].parameters == ["realm": "apps", "type": "1", "title": #"Login to "apps""#])
        #expect(challenges[1].realm == "simple")
        #expect(challenges[2].token68 == "abc123==")
    }

    @Test func aHostileChallengeListCostsBoundedWorkAndIsRefused() throws {
        let many = (0..<10_000).map { "S\($0) realm=\"r\"" }.joined(separator: ", ")
        #expect(AuthenticationChallenge.parse(many).count == AuthenticationChallenge.maximumChallenges + 1)
        var fields = HTTPFields()
        fields[.wwwAuthenticate] = many
        #expect(throws: CourierError(.challengeFailed)) { try AuthenticationChallenge.checkedChallenges(in: fields) }
        #expect(!AuthenticationChallenge.asksForNewBearerToken(fields))

        let crowded = "Digest " + (0..<10_000).map { "p\($0)=\"v\"" }.joined(separator: ", ")
        let digest = try #require(AuthenticationChallenge.parse(crowded).first)
        #expect(digest.parameters.count == AuthenticationChallenge.maximumParameters + 1)
        fields[.wwwAuthenticate] = crowded
        #expect(throws: CourierError(.challengeFailed)) { try AuthenticationChallenge.checkedChallenges(in: fields) }

        let atTheLimits =
            (0..<AuthenticationChallenge.maximumChallenges).map { "S\($0) realm=\"r\"" }.joined(separator: ", ")
        fields[.wwwAuthenticate] = atTheLimits
        #expect(
            try AuthenticationChallenge.checkedChallenges(in: fields).count == AuthenticationChallenge.maximumChallenges
        )
    }

    @Test(
        arguments: [
            (nil, true),
            (#"Bearer realm="courier", error="invalid_token", error_description="expired""#, true),
            (#"Bearer realm="courier""#, true),
            (#"Bearer realm="courier", error="insufficient_scope", scope="read""#, false),
            (#"Basic realm="files""#, false),
        ] as [(String?, Bool)]
    )
    func only401sThatRejectTheBearerTokenAskForANewOne(header: String?, renews: Bool) {
        var fields = HTTPFields()
        if let header { fields[.wwwAuthenticate] = header }
        #expect(AuthenticationChallenge.asksForNewBearerToken(fields) == renews)
    }

    @Test func digestMatchesRFC7616Section3_9_1() throws {
        let credential = ChallengeCredential(user: "Mufasa", password: "Circle of Life")
        for (algorithm, expected) in [
            ("MD5", "8ca523f5e9506fed4657c9700eebdbec"),
            ("SHA-256", "753927fa0e85d155564e2e272a28d1802ca10daf4496794697cf8db5856cb6c1"),
        ] {
            let challenge = try #require(
                AuthenticationChallenge.parse(
                    #"Digest realm="http-auth@example.org", qop="auth, auth-int", algorithm=\#(algorithm), "#
                        + #"nonce="7ypf/xlj9XXwfDPEoM4URrv/xwf94BcCAzFZH4GiTo0v", opaque="FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS""#
                ).first
            )
            let header = try #require(
                DigestAuthentication.authorization(
                    challenge: challenge,
                    credential: credential,
                    method: "GET",
                    uri: "/dir/index.html",
                    clientNonce: "f2/wE4q74E6zIJEtWaHKaf5wv/H5QzzpXusqGemxURZJ",
                    nonceCount: 1
                )
            )
            let answer = try #require(AuthenticationChallenge.parse(header).first)
            #expect(answer.scheme == "Digest")
            #expect(answer.parameters["response"] == expected)
            #expect(answer.parameters["qop"] == "auth")
            #expect(answer.parameters["nc"] == "00000001")
            #expect(answer.parameters["opaque"] == "FQhe/qaU925kfnzjCev0ciny7QMkPqMAFRtzCUYo5tdS")
        }
    }

    @Test func theStrongestSupportedChallengeIsAnswered() throws {
        let challenges = AuthenticationChallenge.parse(
            #"Basic realm="r", Digest realm="r", nonce="n", algorithm=MD5, qop="auth", Digest realm="r", nonce="n", algorithm=SHA-256, qop="auth""#
        )
        #expect(ChallengeMiddleware.strongest(challenges)?.parameters["algorithm"] == "SHA-256")
        #expect(
            ChallengeMiddleware.strongest(
                AuthenticationChallenge.parse(#"Digest realm="r", nonce="n", qop="auth-int""#)
            ) == nil
        )
        #expect(
            ChallengeMiddleware.strongest(AuthenticationChallenge.parse(#"Negotiate, Basic realm="x""#))?.scheme
                == "Basic"
        )
    }

    @Test func errorsCompareByKindAndHashStably() {
        let a = CourierError(kind: .userNotAuthenticated, message: "a", statusCode: 400, endpoint: "POST /oauth/token")
        let b = CourierError(kind: .userNotAuthenticated, message: "b")
        #expect(a == b)
        #expect(a != CourierError(.excessiveRefresh))
        #expect(
            a.stableHash
                == CourierError(
                    kind: .userNotAuthenticated,
                    message: "x",
                    statusCode: 400,
                    endpoint: "POST /oauth/token"
                )
                .stableHash
        )
        #expect(a.stableHash.count == 16)
        // The same vectors as AuthError's hash before the one error: FNV-1a 64 over
        // "auth.<kind>|<status or 0>|<endpoint or ->".
        #expect(a.stableHash == "35140f07a618af8c")
        #expect(a.stableHash == StableHash.hex("auth.userNotAuthenticated|400|POST /oauth/token"))
        #expect(b.stableHash == "a9246c33963f7b4b")
        #expect(
            CourierError(kind: .tokenRefreshFailed, message: "", statusCode: 503, endpoint: "POST /oauth/token")
                .stableHash == "3e57ac9722ec7c70"
        )
        #expect(a.with(requestKind: .implicit).parameters["request_kind"] == "implicit")
        #expect(a.with(requestKind: .implicit).level == .implicit)
    }
}
