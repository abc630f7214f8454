import CourierTesting
import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// ResourceAccess with DPoP over a scripted authorization server and gateway that check every
/// proof: retries, nonces, redirects and stored tokens of another key.
@Suite(.timeLimit(.minutes(1)))
struct DPoPClientTests {
    /// What the scripted gateway saw of each resource request.
    struct Seen: Sendable {
        var path: String
        var authorization: String?
        var proof: String?
    }

    /// A gateway script: the status and fields for the n-th resource request (1-based) and what
    /// it carried.
    typealias Script = @Sendable (Int, HTTPRequest) -> (HTTPResponse.Status, HTTPFields)

    /// An authorization server that issues DPoP tokens `at-N` to any proven grant, and a gateway
    /// that answers as `script` says and records what it saw.
    static func servers(seen: LockedBox<[Seen]>, script: @escaping Script) -> MockTransport {
        let counter = LockedBox(0)
        let resources = LockedBox(0)
        return MockTransport(security: AuthFixtures.security) { request, _ in
            if request.authority == AuthFixtures.authHost {
                let n = counter.withLock {
                    $0 += 1
                    return $0
                }
                let type = request.headerFields[.dpop] == nil ? "Bearer" : "DPoP"
                return AuthFixtures.json(
                    .ok,
                    #"{"access_token":"at-\#(n)","token_type":"\#(type)","expires_in":600,"refresh_token":"rt-\#(n)"}"#
                )
            }
            seen.withLock {
                $0.append(
                    Seen(
                        path: request.path ?? "",
                        authorization: request.headerFields[.authorization],
                        proof: request.headerFields[.dpop]
                    )
                )
            }
            let n = resources.withLock {
                $0 += 1
                return $0
            }
            let (status, fields) = script(n, request)
            return Response(head: HTTPResponse(status: status, headerFields: fields))
        }
    }

    func access(
        _ transport: MockTransport,
        key: DPoPKey,
        store: any TokenStore = InMemoryTokenStore(),
        configure: (inout ResourceAccess.Configuration) -> Void = { _ in }
    ) throws -> ResourceAccess {
        var device = OAuth2ClientCredentials(clientID: "device-1", clientSecret: "d")
        device.dpopKey = key
        var configuration = ResourceAccess.Configuration(
            resourceBaseURL: URL(string: "https://\(AuthFixtures.apiHost)")!,
            authorizationServer: AuthFixtures.server,
            transport: .init(proxy: .none, security: AuthFixtures.security),
            userClient: AuthFixtures.client,
            deviceClient: device,
            tokenStore: store
        )
        configuration.retryPolicy = .default
        configure(&configuration)
        return try ResourceAccess(configuration: configuration, transport: transport)
    }

    /// Checks a recorded proof against the request it went with.
    func expectProof(_ seen: Seen, key: DPoPKey, method: String = "GET", token: String) throws -> String {
        #expect(seen.authorization == "DPoP \(token)")
        let proof = try DPoPProofReader(try #require(seen.proof))
        #expect(proof.signatureIsValid)
        #expect(proof.thumbprint == key.thumbprint)
        #expect(proof.claims["htm"] as? String == method)
        #expect(
            proof.claims["htu"] as? String == "https://\(AuthFixtures.apiHost)\(seen.path.split(separator: "?")[0])"
        )
        #expect(proof.claims["ath"] as? String == Base64URL.encode(Data(SHA256.hash(data: Data(token.utf8)))))
        return try #require(proof.claims["jti"] as? String)
    }

    @Test func eachRetryCarriesAFreshProof() async throws {
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { n, _ in
            n < 3 ? (.serviceUnavailable, [.retryAfter: "0"]) : (.ok, [:])
        }
        let key = DPoPKey.generate()
        let access = try access(transport, key: key)
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info?x=1"))
        #expect(response.statusCode == 200)
        let sends = seen.withLock { $0 }
        #expect(sends.count == 3)
        let jtis = try sends.map { try expectProof($0, key: key, token: "at-1") }
        #expect(Set(jtis).count == 3)
        await access.shutdown()
    }

    @Test func aNonceChallengeFromTheGatewayIsAnsweredOnceAndRemembered() async throws {
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { n, _ in
            n == 1
                ? (
                    .unauthorized,
                    [.wwwAuthenticate: #"DPoP error="use_dpop_nonce", algs="ES256""#, .dpopNonce: "gw-1"]
                )
                : (.ok, [.dpopNonce: "gw-\(n)"])
        }
        let key = DPoPKey.generate()
        let access = try access(transport, key: key)
        #expect(try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/a")).statusCode == 200)
        #expect(try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/b")).statusCode == 200)
        let proofs = try seen.withLock { $0 }.map { try DPoPProofReader(try #require($0.proof)) }
        #expect(proofs.map { $0.claims["nonce"] as? String } == [nil, "gw-1", "gw-2"])
        // The token endpoint's proofs never carried the gateway's nonce.
        let tokenProofs = try transport.requests.filter { $0.request.authority == AuthFixtures.authHost }.map {
            try DPoPProofReader(try #require($0.request.headerFields[.dpop]))
        }
        #expect(tokenProofs.allSatisfy { $0.claims["nonce"] == nil })
        await access.shutdown()
    }

    @Test func aSecondNonceChallengeInARowGoesToTheCaller() async throws {
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { n, _ in
            (.unauthorized, [.wwwAuthenticate: #"DPoP error="use_dpop_nonce""#, .dpopNonce: "gw-\(n)"])
        }
        let access = try access(transport, key: DPoPKey.generate())
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/a"))
        #expect(response.statusCode == 401)
        #expect(seen.withLock { $0.count } == 2)
        await access.shutdown()
    }

    @Test func aRejectedTokenIsRenewedAndResentWithAProofForTheNewOne() async throws {
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { n, _ in
            n == 1 ? (.unauthorized, [.wwwAuthenticate: #"DPoP error="invalid_token", algs="ES256""#]) : (.ok, [:])
        }
        let key = DPoPKey.generate()
        let access = try access(transport, key: key)
        #expect(try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/a")).statusCode == 200)
        let sends = seen.withLock { $0 }
        #expect(sends.count == 2)
        _ = try expectProof(sends[0], key: key, token: "at-1")
        _ = try expectProof(sends[1], key: key, token: "at-2")
        await access.shutdown()
    }

    @Test func anInvalidProofRefusalRenewsNothing() async throws {
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { _, _ in
            (.unauthorized, [.wwwAuthenticate: #"DPoP error="invalid_dpop_proof", algs="ES256""#])
        }
        let access = try access(transport, key: DPoPKey.generate())
        #expect(try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/a")).statusCode == 401)
        #expect(seen.withLock { $0.count } == 1)
        #expect(transport.requests.filter { $0.request.authority == AuthFixtures.authHost }.count == 1)
        await access.shutdown()
    }

    @Test func aSameOriginRedirectHopCarriesNeitherTheProofNorTheToken() async throws {
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { n, _ in
            n == 1 ? (.temporaryRedirect, [.location: "/api/moved"]) : (.unauthorized, [.wwwAuthenticate: "DPoP"])
        }
        let access = try access(transport, key: DPoPKey.generate())
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/a"))
        // The hop went without credentials; its 401 is the caller's and renews nothing.
        #expect(response.statusCode == 401)
        let sends = seen.withLock { $0 }
        #expect(sends.map(\.path) == ["/api/a", "/api/moved"])
        #expect(sends[0].proof != nil)
        #expect(sends[1].proof == nil)
        #expect(sends[1].authorization == nil)
        #expect(transport.requests.filter { $0.request.authority == AuthFixtures.authHost }.count == 1)
        await access.shutdown()
    }

    @Test func aStoredTokenBoundToAnotherKeyIsNeverSent() async throws {
        let store = InMemoryTokenStore()
        let other = DPoPKey(privateKey: P256.Signing.PrivateKey())
        var foreign = OAuth2Token(accessToken: "foreign", tokenType: .dpop, expiresAt: Date().addingTimeInterval(600))
        foreign.keyThumbprint = other.thumbprint
        try await store.setToken(foreign, for: TokenStoreKey(clientID: "device-1", level: .device))
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { _, _ in (.ok, [:]) }
        let key = DPoPKey(privateKey: P256.Signing.PrivateKey())
        let access = try access(transport, key: key, store: store)
        #expect(try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/a")).statusCode == 200)
        let sends = seen.withLock { $0 }
        #expect(sends.count == 1)
        _ = try expectProof(sends[0], key: key, token: "at-1")
        let stored = try await store.token(for: TokenStoreKey(clientID: "device-1", level: .device))
        #expect(stored?.keyThumbprint == key.thumbprint)
        #expect(stored?.generatedKey == nil)  // a supplied key is never written
        await access.shutdown()
    }

    @Test func aRefreshIsProvenWithTheKeyOfTheTokenItRenews() async throws {
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { n, _ in
            n == 1 ? (.unauthorized, [.wwwAuthenticate: #"DPoP error="invalid_token""#]) : (.ok, [:])
        }
        let key = DPoPKey.generate()
        let access = try access(transport, key: key) { $0.userClient.dpopKey = key }
        try await access.userClient.authenticate(username: "alice", password: "pw")
        #expect(try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/u")).statusCode == 200)
        let grants = transport.requests.filter { $0.request.authority == AuthFixtures.authHost }
        #expect(grants.map { AuthFixtures.form($0.body)["grant_type"] } == ["password", "refresh_token"])
        for grant in grants {
            let proof = try DPoPProofReader(try #require(grant.request.headerFields[.dpop]))
            #expect(proof.thumbprint == key.thumbprint)
            #expect(proof.signatureIsValid)
        }
        await access.shutdown()
    }
    /// Restarts a request once, with a cookie, when the gateway asks for a login.
    struct LoginFilter: ResponseFilter {
        func decide(about response: Response, for request: HTTPRequest) async throws -> ResponseFilterDecision {
            guard response.headerFields[HTTPField.Name("X-Login-Required")!] != nil else { return .deliver }
            return .restart(setting: [.cookie: "session=obtained"])
        }
    }

    @Test func aRequestTheFilterRestartsGoesWithAFreshProof() async throws {
        let seen = LockedBox<[Seen]>([])
        let transport = Self.servers(seen: seen) { _, request in
            request.headerFields[.cookie] == nil ? (.ok, [HTTPField.Name("X-Login-Required")!: "1"]) : (.ok, [:])
        }
        let key = DPoPKey.generate()
        let access = try access(transport, key: key) { $0.responseFilter = LoginFilter() }
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/a"))
        #expect(response.statusCode == 200)
        let sends = seen.withLock { $0 }
        #expect(sends.count == 2)
        let jtis = try sends.map { try expectProof($0, key: key, token: "at-1") }
        #expect(Set(jtis).count == 2)
        await access.shutdown()
    }

    @Test func aBearerTokenRenewedIntoABoundOneGoesWithItsProof() async throws {
        let grants = LockedBox(0)
        let seen = LockedBox<[Seen]>([])
        // The server issues a bearer token first, then turns DPoP on.
        let transport = MockTransport(security: AuthFixtures.security) { request, _ in
            if request.authority == AuthFixtures.authHost {
                let n = grants.withLock {
                    $0 += 1
                    return $0
                }
                let type = n == 1 ? "Bearer" : "DPoP"
                return AuthFixtures.json(
                    .ok,
                    #"{"access_token":"at-\#(n)","token_type":"\#(type)","expires_in":600}"#
                )
            }
            let count = seen.withLock {
                $0.append(
                    Seen(
                        path: request.path ?? "",
                        authorization: request.headerFields[.authorization],
                        proof: request.headerFields[.dpop]
                    )
                )
                return $0.count
            }
            return Response(
                head: count == 1
                    ? HTTPResponse(
                        status: .unauthorized,
                        headerFields: [.wwwAuthenticate: #"Bearer error="invalid_token""#]
                    )
                    : HTTPResponse(status: .ok)
            )
        }
        let key = DPoPKey.generate()
        let access = try access(transport, key: key) { $0.deviceClient.requiresDPoP = false }
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/a"))
        #expect(response.statusCode == 200)
        let sends = seen.withLock { $0 }
        #expect(sends.count == 2)
        #expect(sends.first?.authorization == "Bearer at-1")
        #expect(sends.first?.proof == nil)
        if sends.count == 2 { _ = try expectProof(sends[1], key: key, token: "at-2") }
        await access.shutdown()
    }
}
