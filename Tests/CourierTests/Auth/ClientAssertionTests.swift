import CourierTesting
import Crypto
import Foundation
import HTTPTypes
import Testing
import _CryptoExtras

@testable import Courier

/// The JWT client assertions (RFC 7523), their keys, and the pure parts of discovery: checked
/// without a server, the signatures verified with swift-crypto.
@Suite(.timeLimit(.minutes(1)))
struct ClientAssertionTests {
    /// The three parts of a compact JWT, decoded.
    struct Decoded {
        let header: [String: Any]
        let claims: [String: Any]
        let signingInput: Data
        let signature: Data
    }

    static func decode(_ jwt: String) throws -> Decoded {
        let parts = jwt.split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        try #require(parts.count == 3)
        for part in parts {
            // base64url without padding: no '+', '/' or '='.
            #expect(!part.contains { "+/=".contains($0) })
        }
        let header = try #require(Base64URL.decode(parts[0]))
        let claims = try #require(Base64URL.decode(parts[1]))
        return Decoded(
            header: try #require(try JSONSerialization.jsonObject(with: header) as? [String: Any]),
            claims: try #require(try JSONSerialization.jsonObject(with: claims) as? [String: Any]),
            signingInput: Data((parts[0] + "." + parts[1]).utf8),
            signature: try #require(Base64URL.decode(parts[2]))
        )
    }

    @Test func base64URLHasNoPaddingAndTheURLAlphabet() {
        #expect(Base64URL.encode(Data([0xFB, 0xFF])) == "-_8")
        #expect(Base64URL.encode(Data("a".utf8)) == "YQ")
        #expect(Base64URL.decode("-_8") == Data([0xFB, 0xFF]))
        #expect(Base64URL.decode("YQ==") == nil)
        for count in 0..<8 {
            let bytes = Data((0..<count).map { UInt8($0 * 37) })
            #expect(Base64URL.decode(Base64URL.encode(bytes)) == bytes)
        }
    }

    @Test func rs256AssertionHasTheClaimsAndVerifiesWithThePublicKey() throws {
        let privateKey = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let key = try ClientAssertionKey.rsa(pem: privateKey.pemRepresentation, keyID: "k-1")
        #expect(key.algorithm == .rs256)
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let assertion = ClientAssertionJWT(
            signer: .privateKey(key),
            clientID: "svc",
            audience: "https://login.example.test/oauth/token"
        )
        let jwt = try assertion.make(now: now, jti: "id-1")
        let decoded = try Self.decode(jwt)
        #expect(decoded.header["alg"] as? String == "RS256")
        #expect(decoded.header["typ"] as? String == "JWT")
        #expect(decoded.header["kid"] as? String == "k-1")
        #expect(decoded.claims["iss"] as? String == "svc")
        #expect(decoded.claims["sub"] as? String == "svc")
        #expect(decoded.claims["aud"] as? String == "https://login.example.test/oauth/token")
        #expect(decoded.claims["jti"] as? String == "id-1")
        #expect(decoded.claims["iat"] as? Int == 1_800_000_000)
        #expect(decoded.claims["exp"] as? Int == 1_800_000_060)
        let signature = _RSA.Signing.RSASignature(rawRepresentation: decoded.signature)
        #expect(
            privateKey.publicKey.isValidSignature(signature, for: decoded.signingInput, padding: .insecurePKCS1v1_5)
        )
        // The URL's slashes are not escaped, so a server comparing `aud` sees the plain URL.
        #expect(
            String(decoding: Base64URL.decode(jwt.split(separator: ".")[1].description)!, as: UTF8.self)
                .contains("https://login.example.test/oauth/token")
        )
    }

    @Test func es256AssertionIsARawSignatureThatVerifies() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try ClientAssertionKey.ecdsaP256(pem: privateKey.pemRepresentation)
        #expect(key.algorithm == .es256)
        let jwt = try ClientAssertionJWT(signer: .privateKey(key), clientID: "svc", audience: "https://a.test").make()
        let decoded = try Self.decode(jwt)
        #expect(decoded.header["alg"] as? String == "ES256")
        #expect(decoded.header["kid"] == nil)
        // JWS ES256 is r ‖ s, 64 bytes (RFC 7518 §3.4), not DER.
        #expect(decoded.signature.count == 64)
        let signature = try P256.Signing.ECDSASignature(rawRepresentation: decoded.signature)
        #expect(privateKey.publicKey.isValidSignature(signature, for: decoded.signingInput))
    }

    @Test func hs256AssertionIsAnHMACOverTheSecret() throws {
        let secret = "a-client-secret-of-at-least-thirty-two-bytes"
        let jwt = try ClientAssertionJWT(signer: .secret(secret), clientID: "svc", audience: "https://a.test").make()
        let decoded = try Self.decode(jwt)
        #expect(decoded.header["alg"] as? String == "HS256")
        let mac = HMAC<SHA256>.authenticationCode(
            for: decoded.signingInput,
            using: SymmetricKey(data: Data(secret.utf8))
        )
        #expect(Data(mac) == decoded.signature)
    }

    @Test func everyAssertionHasItsOwnJTI() throws {
        let assertion = ClientAssertionJWT(signer: .secret("s"), clientID: "svc", audience: "https://a.test")
        var seen = Set<String>()
        for _ in 0..<100 {
            let jti = try #require(try Self.decode(assertion.make()).claims["jti"] as? String)
            #expect(Base64URL.decode(jti)?.count == 16)
            seen.insert(jti)
        }
        #expect(seen.count == 100)
    }

    @Test func keysAreReadFromEveryPEMFormAndFiles() throws {
        let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
        let p256 = P256.Signing.PrivateKey()
        // The server-made keys of the integration tests cover PKCS#8 and PKCS#1 RSA too.
        _ = try ClientAssertionKey.rsa(pem: rsa.pemRepresentation)
        _ = try ClientAssertionKey.ecdsaP256(pem: p256.pemRepresentation)  // PKCS#8
        _ = try ClientAssertionKey.ecdsaP256(pem: PEMText.wrap(try Self.sec1DER(p256), "EC PRIVATE KEY"))

        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-keys-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let rsaFile = directory.appendingPathComponent("rsa.pem").path
        try rsa.pemRepresentation.write(toFile: rsaFile, atomically: true, encoding: .utf8)
        let fromFile = try ClientAssertionKey.rsa(pemFile: rsaFile, keyID: "f")
        #expect(fromFile == (try ClientAssertionKey.rsa(pem: rsa.pemRepresentation, keyID: "f")))
        #expect(fromFile != (try ClientAssertionKey.rsa(pem: rsa.pemRepresentation, keyID: "g")))
    }

    /// SEC 1 DER of a P-256 key, as `openssl ec` writes it, made by swift-crypto's own
    /// PKCS#8 → the embedded ECPrivateKey (the OCTET STRING at the end of PKCS#8).
    static func sec1DER(_ key: P256.Signing.PrivateKey) throws -> Data {
        let pkcs8 = key.derRepresentation
        // PKCS#8 for P-256 ends with OCTET STRING { ECPrivateKey }: find its SEQUENCE.
        let bytes = [UInt8](pkcs8)
        for index in bytes.indices.dropLast(2) where bytes[index] == 0x04 && bytes[index + 2] == 0x30 {
            let length = Int(bytes[index + 1])
            if index + 2 + length == bytes.count { return Data(bytes[(index + 2)...]) }
        }
        throw CourierError(.invalidConfiguration, message: "no ECPrivateKey in the PKCS#8 DER")
    }

    @Test func badKeysAreConfigurationErrorsNotCrashes() throws {
        let p256 = P256.Signing.PrivateKey().pemRepresentation
        #expect(throws: CourierError(.invalidConfiguration)) { try ClientAssertionKey.rsa(pem: p256) }
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ClientAssertionKey.ecdsaP256(pem: try _RSA.Signing.PrivateKey(keySize: .bits2048).pemRepresentation)
        }
        #expect(throws: CourierError(.invalidConfiguration)) { try ClientAssertionKey.rsa(pem: "not a key") }
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ClientAssertionKey.rsa(
                pem: try _RSA.Signing.PrivateKey(unsafeKeySize: .init(bitCount: 1024)).pemRepresentation
            )
        }
        let error = #expect(throws: CourierError(.invalidConfiguration)) {
            try ClientAssertionKey.ecdsaP256(pemFile: "/nonexistent/courier-key.pem")
        }
        #expect(error?.message.contains("/nonexistent/courier-key.pem") == true)
    }

    @Test func neitherTheKeyNorTheSecretIsEverDescribed() throws {
        let privateKey = P256.Signing.PrivateKey()
        let key = try ClientAssertionKey.ecdsaP256(pem: privateKey.pemRepresentation, keyID: "kid-7")
        let client = OAuth2ClientCredentials(clientID: "svc", privateKey: key)
        #expect(client.method == .privateKeyJWT)
        #expect(client.assertion?.key == key)
        #expect(client.clientSecret == nil)
        var dumped = ""
        dump(client, to: &dumped)
        for text in [client.description, key.description, key.debugDescription, dumped, String(reflecting: key)] {
            #expect(!text.contains(privateKey.pemRepresentation))
            #expect(!text.contains(Base64URL.encode(privateKey.rawRepresentation)))
            #expect(!text.contains(privateKey.rawRepresentation.base64EncodedString()))
        }
        #expect(client.description.contains("private_key_jwt"))
        #expect(key.description == "ClientAssertionKey(ES256, kid: kid-7)")
        #expect(Redaction.sensitiveParameters.contains("client_assertion"))
    }

    @Test func tokenRequestCarriesAFreshAssertionAndNoSecret() async throws {
        let key = try ClientAssertionKey.ecdsaP256(pem: P256.Signing.PrivateKey().pemRepresentation)
        let client = OAuth2ClientCredentials(clientID: "svc", privateKey: key)
        let (endpoint, transport) = AuthFixtures.endpoint(client: client) { _, _ in
            AuthFixtures.json(.ok, #"{"access_token":"a","token_type":"Bearer"}"#)
        }
        _ = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [("scope", "read")])
        _ = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        #expect(transport.requests.count == 2)
        var jtis: [String] = []
        for sent in transport.requests {
            #expect(sent.request.headerFields[.authorization] == nil)
            let form = AuthFixtures.form(sent.body)
            #expect(form["client_assertion_type"] == "urn:ietf:params:oauth:client-assertion-type:jwt-bearer")
            #expect(form["client_secret"] == nil)
            let decoded = try Self.decode(try #require(form["client_assertion"]))
            #expect(decoded.claims["aud"] as? String == AuthFixtures.server.tokenEndpoint.absoluteString)
            jtis.append(try #require(decoded.claims["jti"] as? String))
        }
        #expect(AuthFixtures.form(transport.requests[0].body)["scope"] == "read")
        #expect(Set(jtis).count == 2)
    }

    @Test func configuredAudienceAndClientSecretJWT() async throws {
        var client = OAuth2ClientCredentials(clientID: "svc", clientSecret: "shh", assertion: .clientSecret)
        client.assertionAudience = "https://auth.example.test"
        let (endpoint, transport) = AuthFixtures.endpoint(client: client) { _, _ in
            AuthFixtures.json(.ok, #"{"access_token":"a"}"#)
        }
        _ = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        let form = AuthFixtures.form(transport.requests.first?.body)
        #expect(form["client_secret"] == nil)
        let decoded = try Self.decode(try #require(form["client_assertion"]))
        #expect(decoded.header["alg"] as? String == "HS256")
        #expect(decoded.claims["aud"] as? String == "https://auth.example.test")
    }

    @Test func aClientSecretJWTClientWithoutASecretIsRefusedAtConfiguration() throws {
        for client in [
            OAuth2ClientCredentials(clientID: "a", clientSecret: nil, assertion: .clientSecret),
            OAuth2ClientCredentials(clientID: "b", clientSecret: "", assertion: .clientSecret),
        ] {
            #expect(throws: CourierError(.invalidConfiguration)) { try client.validate() }
        }
    }

    @Test func resourceAccessRefusesClientsTheConfigurationCannotServe() throws {
        let key = try ClientAssertionKey.ecdsaP256(pem: P256.Signing.PrivateKey().pemRepresentation)
        let transport = MockTransport(security: AuthFixtures.security) { _, _ in
            Response(head: HTTPResponse(status: .ok))
        }
        func configuration(
            device: OAuth2ClientCredentials,
            supported: Set<OAuth2ClientCredentials.AuthenticationMethod>? = nil
        ) -> ResourceAccess.Configuration {
            var server = AuthFixtures.server
            server.supportedClientAuthentications = supported
            return ResourceAccess.Configuration(
                resourceBaseURL: URL(string: "https://\(AuthFixtures.apiHost)")!,
                authorizationServer: server,
                transport: .init(security: AuthFixtures.security),
                userClient: AuthFixtures.client,
                deviceClient: device
            )
        }
        let jwtDevice = OAuth2ClientCredentials(clientID: "device", privateKey: key)
        _ = try ResourceAccess(configuration: configuration(device: jwtDevice), transport: transport)
        _ = try ResourceAccess(
            configuration: configuration(device: jwtDevice, supported: [.clientSecretBasic, .privateKeyJWT]),
            transport: transport
        )
        // The server does not list the method.
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ResourceAccess(
                configuration: configuration(device: jwtDevice, supported: [.clientSecretBasic]),
                transport: transport
            )
        }
        // A JWT client has no secret to send as Basic.
        var basicAnonymous = configuration(device: jwtDevice)
        basicAnonymous.anonymousAuthorization = .clientBasic
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ResourceAccess(configuration: basicAnonymous, transport: transport)
        }
        // No secret to sign with.
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ResourceAccess(
                configuration: configuration(
                    device: OAuth2ClientCredentials(clientID: "d", clientSecret: nil, assertion: .clientSecret)
                ),
                transport: transport
            )
        }
    }

    // MARK: Discovery, pure parts

    @Test func wellKnownURLs() {
        let plain = URL(string: "https://login.example.test")!
        let tenant = URL(string: "https://login.example.test/tenant/a/")!
        #expect(
            AuthorizationServer.wellKnownURL(plain, oauth: true).absoluteString
                == "https://login.example.test/.well-known/oauth-authorization-server"
        )
        #expect(
            AuthorizationServer.wellKnownURL(tenant, oauth: true).absoluteString
                == "https://login.example.test/.well-known/oauth-authorization-server/tenant/a"
        )
        #expect(
            AuthorizationServer.wellKnownURL(tenant, oauth: false).absoluteString
                == "https://login.example.test/tenant/a/.well-known/openid-configuration"
        )
    }

    @Test func cacheControlDecidesHowLongADocumentIsKept() {
        let hour = Duration.seconds(3600)
        typealias Cache = AuthorizationServer.DiscoveryCache
        #expect(Cache.maxAge(cacheControl: nil, default: hour) == hour)
        #expect(Cache.maxAge(cacheControl: "public, max-age=120", default: hour) == .seconds(120))
        #expect(Cache.maxAge(cacheControl: "max-age=\"60\"", default: hour) == .seconds(60))
        #expect(Cache.maxAge(cacheControl: "no-store", default: hour) == nil)
        #expect(Cache.maxAge(cacheControl: "max-age=10, no-cache", default: hour) == nil)
        #expect(Cache.maxAge(cacheControl: "max-age=oops", default: hour) == hour)
    }

    @Test func discoveryUsesTheCacheAndChecksTheDocument() async throws {
        let issuer = "https://\(AuthFixtures.authHost)"
        let document: @Sendable (String, String) -> Response = { issuer, token in
            AuthFixtures.json(
                .ok,
                #"{"issuer":"\#(issuer)","token_endpoint":"\#(token)","# + #""revocation_endpoint":"\#(token)/r"}"#,
                headers: [.cacheControl: "max-age=600"]
            )
        }
        let transport = MockTransport(security: AuthFixtures.security) { _, _ in
            document(issuer, "\(issuer)/token")
        }
        let cache = AuthorizationServer.DiscoveryCache()
        let server = try await AuthorizationServer.discover(
            issuer: URL(string: issuer)!,
            transport: transport,
            cache: cache
        )
        #expect(server.tokenEndpoint.absoluteString == "\(issuer)/token")
        #expect(server.revocationEndpoint?.absoluteString == "\(issuer)/token/r")
        #expect(server.issuer?.absoluteString == issuer)
        _ = try await AuthorizationServer.discover(issuer: URL(string: issuer)!, transport: transport, cache: cache)
        #expect(transport.requests.count == 1)
        #expect(transport.requests.first?.request.path == "/.well-known/oauth-authorization-server")
        cache.removeAll()
        _ = try await AuthorizationServer.discover(issuer: URL(string: issuer)!, transport: transport, cache: cache)
        #expect(transport.requests.count == 2)

        for (documentIssuer, token, kind) in [
            ("https://evil.example.test", "\(issuer)/token", CourierError.Kind.invalidConfiguration),
            (issuer, "https://\(AuthFixtures.authHost).evil.test/token", .untrustedHost),
            (issuer, "http://\(AuthFixtures.authHost)/token", .insecureScheme),
        ] {
            let bad = MockTransport(security: AuthFixtures.security) { _, _ in document(documentIssuer, token) }
            await #expect(throws: CourierError(kind)) {
                try await AuthorizationServer.discover(
                    issuer: URL(string: issuer)!,
                    transport: bad,
                    cache: AuthorizationServer.DiscoveryCache()
                )
            }
        }
    }
}

/// PEM armour for test keys.
enum PEMText {
    static func wrap(_ der: Data, _ label: String) -> String {
        let base64 = der.base64EncodedString(options: [.lineLength64Characters, .endLineWithLineFeed])
        return "-----BEGIN \(label)-----\n\(base64)\n-----END \(label)-----\n"
    }
}
