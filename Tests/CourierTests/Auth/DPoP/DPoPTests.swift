import CourierTesting
import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// DPoP (RFC 9449) without servers: keys and thumbprints, proofs, token types, nonces at the
/// token endpoint, bindings, stored records.
@Suite(.timeLimit(.minutes(1)))
struct DPoPTests {
    /// A fixed P-256 key: the scalar 0x0102…20. Its public coordinates and thumbprint were
    /// computed once with Python's `cryptography` (48.0):
    /// `ec.derive_private_key(int.from_bytes(bytes(range(1, 33)), "big"), ec.SECP256R1())`,
    /// then SHA-256 over `{"crv":"P-256","kty":"EC","x":…,"y":…}`, base64url.
    static let fixedKey = DPoPKey(privateKey: try! P256.Signing.PrivateKey(rawRepresentation: Data(1...32)))
    static let fixedX = "UVw9brnjlrkE0_7Kf1T9zQzB6Ze_N13KUVrQpsO0A18"
    static let fixedY = "RTa-OlDzGPv5pUdZAqIhUCvvDVfgjFOyzApW8X2fk1Q"
    static let fixedThumbprint = "6UoWwDCkLjV0J-pQG8c0THxbVhBcpR0AZDift1Yl5DM"

    // MARK: Thumbprints

    @Test func theRFC7638ExampleThumbprint() {
        let n =
            "0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw"
        #expect(
            DPoPKey.thumbprint(ofJWK: [("e", "AQAB"), ("kty", "RSA"), ("n", n)])
                == "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs"
        )
    }

    @Test func anECThumbprintMatchesOneComputedIndependently() throws {
        let key = Self.fixedKey
        #expect(key.coordinates.x == Self.fixedX)
        #expect(key.coordinates.y == Self.fixedY)
        #expect(key.thumbprint == Self.fixedThumbprint)
        // The same key from PEM is the same key.
        let fromPEM = try DPoPKey(pem: P256.Signing.PrivateKey(rawRepresentation: Data(1...32)).pemRepresentation)
        #expect(fromPEM == key)
        #expect(!fromPEM.isGenerated)
        #expect(DPoPKey.generate().isGenerated)
        #expect(DPoPKey.generate().thumbprint != DPoPKey.generate().thumbprint)
    }

    @Test func aKeyNeverShowsItsMaterial() throws {
        let key = Self.fixedKey
        let raw = Base64URL.encode(key.rawPrivateKey)
        for text in [
            key.description, key.debugDescription, String(reflecting: key),
            "\(Mirror(reflecting: key).children.map(\.value))",
        ] {
            #expect(!text.contains(raw))
        }
        #expect(key.description.contains(Self.fixedThumbprint))
        #expect(throws: CourierError(.invalidConfiguration)) { try DPoPKey(pem: "not a key") }
        #expect(throws: CourierError(.invalidConfiguration)) { try DPoPKey(pemFile: "/nonexistent/dpop.pem") }
    }

    // MARK: Proofs

    @Test func aProofHasTheRFC9449HeaderAndClaimsAndVerifies() throws {
        let key = Self.fixedKey
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let proof = try DPoPProof.make(
            key: key,
            method: .post,
            targetURI: "https://api.example.test/things",
            accessToken: "Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU",
            nonce: "eyJ7S_zG.eyJH0-Z.HX4w-7v",
            now: now
        )
        let read = try DPoPProofReader(proof)
        #expect(read.signatureIsValid)
        #expect(read.publicKey.rawRepresentation == key.publicKey.rawRepresentation)
        #expect(read.header["typ"] as? String == "dpop+jwt")
        #expect(read.header["alg"] as? String == "ES256")
        #expect(read.jwk == ["kty": "EC", "crv": "P-256", "x": Self.fixedX, "y": Self.fixedY])  // no `d`
        #expect(read.thumbprint == key.thumbprint)
        #expect(read.claims["htm"] as? String == "POST")
        #expect(read.claims["htu"] as? String == "https://api.example.test/things")
        #expect(read.claims["iat"] as? Int == 1_800_000_000)
        // RFC 9449 §7.1's example: the access token above hashes to this `ath`.
        #expect(read.claims["ath"] as? String == "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo")
        #expect(read.claims["nonce"] as? String == "eyJ7S_zG.eyJH0-Z.HX4w-7v")
        let jti = try #require(read.claims["jti"] as? String)
        #expect((Base64URL.decode(jti)?.count ?? 0) * 8 >= 96)
        #expect(Set(read.claims.keys) == ["htm", "htu", "iat", "jti", "ath", "nonce"])
    }

    @Test func aTokenRequestProofHasNoAthAndEveryProofItsOwnJti() throws {
        let proofs = try (0..<100).map { _ in
            try DPoPProofReader(DPoPProof.make(key: Self.fixedKey, method: .post, targetURI: "https://a.test/token"))
        }
        #expect(proofs.allSatisfy { $0.claims["ath"] == nil && $0.claims["nonce"] == nil && $0.signatureIsValid })
        #expect(Set(proofs.compactMap { $0.claims["jti"] as? String }).count == 100)
    }

    @Test func claimsAreEscapedAsJSON() throws {
        let proof = try DPoPProof.make(key: Self.fixedKey, method: .get, targetURI: "https://a.test/", nonce: "a\"b\\c")
        #expect(try DPoPProofReader(proof).claims["nonce"] as? String == "a\"b\\c")
    }

    @Test(arguments: [
        ("HTTPS", "API.Example.TEST:443", "/a/b?x=1#frag", "https://api.example.test/a/b"),
        ("https", "api.example.test:8443", "/a%20b?q", "https://api.example.test:8443/a%20b"),
        ("http", "127.0.0.1:80", "/", "http://127.0.0.1/"),
        ("https", "[::1]:443", "", "https://[::1]/"),
        ("https", "api.example.test.", "/p#f", "https://api.example.test/p"),
    ])
    func theTargetURIHasNoQueryFragmentOrDefaultPort(
        scheme: String,
        authority: String,
        path: String,
        expected: String
    ) {
        let request = HTTPRequest(method: .get, scheme: scheme, authority: authority, path: path)
        #expect(DPoPProof.targetURI(of: request) == expected)
    }

    // MARK: Token types at the token endpoint

    static func tokenResponse(_ type: String) -> MockTransport.Responder {
        { _, _ in AuthFixtures.json(.ok, #"{"access_token":"at","token_type":"\#(type)","expires_in":600}"#) }
    }

    static func client(_ key: DPoPKey?, requires: Bool = true) -> OAuth2ClientCredentials {
        var client = AuthFixtures.client
        client.dpopKey = key
        client.requiresDPoP = requires
        return client
    }

    @Test func aDPoPTokenIsBoundToTheKeyThatProvedTheRequest() async throws {
        let (endpoint, transport) = AuthFixtures.endpoint(
            client: Self.client(Self.fixedKey),
            responder: Self.tokenResponse("dpop")
        )
        let token = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        #expect(token.tokenType == .dpop)
        #expect(token.authorizationValue == "DPoP at")
        #expect(token.keyThumbprint == Self.fixedThumbprint)
        #expect(token.generatedKey == nil)  // a supplied key is never kept with the token
        let sent = try #require(transport.requests.first?.request)
        let proof = try DPoPProofReader(try #require(sent.headerFields[.dpop]))
        #expect(proof.signatureIsValid)
        #expect(proof.thumbprint == Self.fixedThumbprint)
        #expect(proof.claims["htm"] as? String == "POST")
        #expect(proof.claims["htu"] as? String == "https://\(AuthFixtures.authHost)/oauth/token")
        #expect(proof.claims["ath"] == nil)
    }

    @Test func aGeneratedKeyIsKeptWithItsToken() async throws {
        let key = DPoPKey.generate()
        let (endpoint, _) = AuthFixtures.endpoint(client: Self.client(key), responder: Self.tokenResponse("DPoP"))
        let token = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        #expect(token.generatedKey?.key == key)
        // It survives encoding, as every store encodes tokens.
        let decoded = try JSONDecoder().decode(OAuth2Token.self, from: JSONEncoder().encode(token))
        #expect(decoded == token)
        #expect(decoded.generatedKey?.key.thumbprint == key.thumbprint)
        #expect(!token.description.contains(Base64URL.encode(key.rawPrivateKey)))
    }

    @Test func aDPoPTokenWithoutAProofIsRefused() async throws {
        let (endpoint, _) = AuthFixtures.endpoint(client: Self.client(nil), responder: Self.tokenResponse("DPoP"))
        let error = await #expect(throws: CourierError(.invalidTokenResponse)) {
            try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        }
        #expect(error?.message.contains("no DPoP proof") == true)
    }

    @Test func aBearerTokenForAProofIsRefusedWhenDPoPIsRequired() async throws {
        let (endpoint, _) = AuthFixtures.endpoint(
            client: Self.client(Self.fixedKey),
            responder: Self.tokenResponse("Bearer")
        )
        await #expect(throws: CourierError(.invalidTokenResponse)) {
            try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        }
        let (lenient, _) = AuthFixtures.endpoint(
            client: Self.client(Self.fixedKey, requires: false),
            responder: Self.tokenResponse("Bearer")
        )
        let token = try await lenient.requestToken(grantType: .clientCredentials, parameters: [])
        #expect(token.tokenType == .bearer)
        #expect(token.keyThumbprint == nil)
    }

    // MARK: Nonces at the token endpoint

    static func nonceServer(challenges: Int) -> MockTransport.Responder {
        let seen = LockedBox(0)
        return { request, _ in
            let count = seen.withLock {
                $0 += 1
                return $0
            }
            let nonce = "nonce-\(count)"
            if count <= challenges {
                return AuthFixtures.json(.badRequest, #"{"error":"use_dpop_nonce"}"#, headers: [.dpopNonce: nonce])
            }
            return AuthFixtures.json(
                .ok,
                #"{"access_token":"at","token_type":"DPoP","expires_in":600}"#,
                headers: [.dpopNonce: nonce]
            )
        }
    }

    @Test func aNonceChallengeAtTheTokenEndpointIsAnsweredOnce() async throws {
        let (endpoint, transport) = AuthFixtures.endpoint(
            client: Self.client(Self.fixedKey),
            responder: Self.nonceServer(challenges: 1)
        )
        _ = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [("scope", "device")])
        let proofs = try transport.requests.map { try DPoPProofReader(try #require($0.request.headerFields[.dpop])) }
        #expect(proofs.count == 2)
        #expect(proofs[0].claims["nonce"] == nil)
        #expect(proofs[1].claims["nonce"] as? String == "nonce-1")
        #expect(proofs[0].claims["jti"] as? String != proofs[1].claims["jti"] as? String)
        #expect(transport.requests[0].body == transport.requests[1].body)
        // The success's nonce goes into the next proof for that server, with no challenge.
        _ = try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        #expect(
            try DPoPProofReader(try #require(transport.requests[2].request.headerFields[.dpop])).claims["nonce"]
                as? String == "nonce-2"
        )
        #expect(transport.requests.count == 3)
    }

    @Test func aSecondNonceChallengeGoesToTheCaller() async throws {
        let (endpoint, transport) = AuthFixtures.endpoint(
            client: Self.client(Self.fixedKey),
            responder: Self.nonceServer(challenges: 2)
        )
        let error = await #expect(throws: CourierError(.grantRejected)) {
            try await endpoint.requestToken(grantType: .clientCredentials, parameters: [])
        }
        #expect(error?.oauthError?.code == .useDPoPNonce)
        #expect(transport.requests.count == 2)
    }

    // MARK: Bindings and stored records

    @Test func aTokenGoesOnlyWithTheKeyItIsBoundTo() {
        let supplied = Self.fixedKey
        let other = DPoPKey(privateKey: P256.Signing.PrivateKey())
        var bearer = OAuth2Token(accessToken: "b")
        #expect(bearer.binding(configured: nil, requiresDPoP: true) == .bearer)
        #expect(bearer.binding(configured: supplied, requiresDPoP: true) == .unusable)
        #expect(bearer.binding(configured: supplied, requiresDPoP: false) == .bearer)
        bearer.tokenType = .dpop
        #expect(bearer.binding(configured: supplied, requiresDPoP: true) == .unusable)

        var bound = OAuth2Token(accessToken: "d", tokenType: .dpop)
        bound.keyThumbprint = supplied.thumbprint
        #expect(bound.binding(configured: supplied, requiresDPoP: true) == .key(supplied))
        #expect(bound.binding(configured: other, requiresDPoP: true) == .unusable)
        #expect(bound.binding(configured: nil, requiresDPoP: true) == .unusable)

        // A token bound to a generated key carries it: a process with a newer generated key
        // still sends it with its own key, never with the newer one.
        let generated = DPoPKey.generate()
        var kept = OAuth2Token(accessToken: "g", tokenType: .dpop)
        kept.keyThumbprint = generated.thumbprint
        kept.generatedKey = StoredDPoPKey(generated)
        #expect(kept.binding(configured: DPoPKey.generate(), requiresDPoP: true) == .key(generated))
        // … but a supplied key is the only key when the application supplies one.
        #expect(kept.binding(configured: supplied, requiresDPoP: true) == .unusable)
    }

    @Test func anOldTokenRecordStillDecodes() throws {
        // A record as stores wrote it before tokens could be bound to a key.
        let old = Data(
            #"{"accessToken":"at","additionalFields":{},"expiresAt":1900000000,"issuedAt":1800000000,"refreshToken":"rt","scope":["read"],"tokenType":"Bearer"}"#
                .utf8
        )
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .secondsSince1970
        let token = try decoder.decode(OAuth2Token.self, from: old)
        #expect(token.accessToken == "at")
        #expect(token.refreshToken == "rt")
        #expect(token.keyThumbprint == nil)
        #expect(token.generatedKey == nil)
        #expect(token.binding(configured: nil, requiresDPoP: true) == .bearer)
    }

    @Test func aDamagedGeneratedKeyRecordIsAnErrorNotAToken() {
        let damaged = Data(
            #"{"accessToken":"at","additionalFields":{},"issuedAt":0,"tokenType":"DPoP","keyThumbprint":"x","generatedKey":{"privateKey":"AAAA"}}"#
                .utf8
        )
        #expect(throws: DecodingError.self) { try JSONDecoder().decode(OAuth2Token.self, from: damaged) }
    }

    @Test func theEncryptedFileStoreKeepsAGeneratedKeyWithItsToken() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dpop-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let storeKey = SymmetricKey(size: .bits256)
        let key = DPoPKey.generate()
        var token = OAuth2Token(accessToken: "at", tokenType: .dpop, expiresAt: Date().addingTimeInterval(600))
        token.keyThumbprint = key.thumbprint
        token.generatedKey = StoredDPoPKey(key)
        let entry = TokenStoreKey(clientID: "c", level: .device)
        try await EncryptedFileTokenStore(path: path, keyProvider: .key(storeKey)).setToken(token, for: entry)
        // Another process (a new store over the same file) reads the token and its key.
        let read = try #require(
            try await EncryptedFileTokenStore(path: path, keyProvider: .key(storeKey)).token(for: entry)
        )
        #expect(read.generatedKey?.key.rawPrivateKey == key.rawPrivateKey)
        #expect(read.binding(configured: DPoPKey.generate(), requiresDPoP: true) == .key(key))
        // And the file holds no key in the clear.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.range(of: key.rawPrivateKey) == nil)
        #expect(bytes.range(of: Data(key.rawPrivateKey.base64EncodedString().utf8)) == nil)
    }

    // MARK: Credentials policy, logs, challenges

    @Test func theDPoPFieldIsRedactedAndReserved() throws {
        #expect(Redaction.isSensitive(.dpop))
        var fields = HTTPFields()
        fields[.dpop] = "eyJhbGciOi.proof.sig"
        #expect(!Redaction.fields(fields).contains("eyJ"))
        var request = HTTPRequest(method: .get, scheme: "https", authority: AuthFixtures.apiHost, path: "/")
        request.headerFields[.dpop] = "mine"
        #expect(throws: CourierError(.reservedHeader)) { try AuthFixtures.security.checkAuthorizable(request) }
    }

    @Test func aRequestWithADPoPTokenIsNeverCachedInTheSharedPartition() throws {
        func request(proof: String) -> HTTPRequest {
            var request = HTTPRequest(method: .get, scheme: "https", authority: AuthFixtures.apiHost, path: "/r")
            request.headerFields[.authorization] = "DPoP at-1"
            request.headerFields[.dpop] = proof
            return request
        }
        let first = CacheMiddleware.defaultPartition(of: request(proof: "proof-1"))
        #expect(!first.isShared)
        // The token is the credential; each request's proof is not: one partition per token.
        #expect(CacheMiddleware.defaultPartition(of: request(proof: "proof-2")) == first)
    }

    @Test func challengesForDPoPTokens() {
        func fields(_ value: String) -> HTTPFields { [.wwwAuthenticate: value] }
        #expect(AuthenticationChallenge.asksForDPoPNonce(fields(#"DPoP error="use_dpop_nonce", algs="ES256""#)))
        #expect(!AuthenticationChallenge.asksForDPoPNonce(fields(#"DPoP error="invalid_token""#)))
        #expect(AuthenticationChallenge.asksForNewToken(fields(#"DPoP error="invalid_token", algs="ES256""#)))
        #expect(AuthenticationChallenge.asksForNewToken(fields(#"DPoP algs="ES256""#)))
        #expect(!AuthenticationChallenge.asksForNewToken(fields(#"DPoP error="invalid_dpop_proof", algs="ES256""#)))
        #expect(!AuthenticationChallenge.asksForNewToken(fields(#"DPoP error="use_dpop_nonce""#)))
    }
}
