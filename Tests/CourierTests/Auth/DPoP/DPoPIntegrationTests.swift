import Crypto
import Foundation
import HTTPTypes
import Synchronization
import Testing

@testable import Courier

/// DPoP against the real authorization server (authlib) and the introspecting gateway, over
/// pinned TLS: bound tokens from every grant, refusals of replayed, misdirected and stolen
/// proofs and tokens, nonces at both servers, a burst of fresh proofs, and tokens shared
/// through a store. Serialized: the servers' DPoP settings are shared, and every count is
/// compared as a delta.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct DPoPIntegrationTests {
    let env: AuthEnvironment
    let admin: OAuthAdmin
    let gatewayAdmin: Session

    init() async throws {
        env = try await AuthServers.shared()
        admin = OAuthAdmin(env)
        gatewayAdmin = Session(
            configuration: .init(baseURL: env.gatewayPlain),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        // Whatever an earlier test left on: nonces off, proofs not required.
        _ = try await admin.json(.post, "/admin/dpop?require=false&nonce=false")
        _ = try await gatewayDPoP(nonce: false)
    }

    /// A transport that records the head of every request it sends to the gateway, and sends it
    /// through the real transport: what left the process, after every middleware.
    final class RecordingTransport: Transport {
        let inner: CurlTransport
        let gatewayAuthority: String
        let sent = Mutex<[HTTPRequest]>([])

        init(_ inner: CurlTransport, gateway: URL) {
            self.inner = inner
            self.gatewayAuthority = Authority(url: gateway)?.description ?? ""
        }

        var security: SecurityConfiguration { inner.security }

        func execute(
            _ request: HTTPRequest,
            body: RequestBody?,
            options: TransferOptions,
            control: TransferControl
        ) async throws -> Response {
            if request.authority == gatewayAuthority { sent.withLock { $0.append(request) } }
            return try await inner.execute(request, body: body, options: options, control: control)
        }

        func shutdown() async { await inner.shutdown() }

        var requests: [HTTPRequest] { sent.withLock { $0 } }
    }

    func access(
        key: DPoPKey?,
        userKey: DPoPKey? = nil,
        store: any TokenStore = InMemoryTokenStore()
    ) throws -> (ResourceAccess, RecordingTransport) {
        var configuration = env.configuration(tokenStore: store)
        configuration.deviceClient.dpopKey = key
        configuration.userClient.dpopKey = userKey
        let transport = RecordingTransport(CurlTransport(configuration: configuration.transport), gateway: env.gateway)
        return (try ResourceAccess(configuration: configuration, transport: transport), transport)
    }

    // MARK: Servers' admin and introspection

    func gatewayDPoP(nonce: Bool? = nil) async throws -> [String: Any] {
        let response = try await gatewayAdmin.send(
            HTTPRequest(method: nonce == nil ? .get : .post, path: "/admin/dpop" + (nonce.map { "?nonce=\($0)" } ?? ""))
        )
        return try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
    }

    func count(_ settings: [String: Any], _ name: String) -> Int { settings[name] as? Int ?? 0 }

    /// What the authorization server says about `token`, asked by the client that owns it.
    func introspect(_ token: String, client: OAuth2ClientCredentials) async throws -> [String: Any] {
        var request = HTTPRequest(method: .post, path: "/oauth/introspect")
        request.headerFields[.authorization] = OAuth2Form.basicCredentials(
            clientID: client.clientID,
            clientSecret: client.clientSecret ?? ""
        )
        request.headerFields[.contentType] = "application/x-www-form-urlencoded"
        let response = try await admin.session.send(request, body: .data(OAuth2Form.encode([("token", token)])))
        return try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
    }

    /// Sends by hand, as someone who copied a token or a proof would: a plain session on the
    /// same pinned trust, with whatever `Authorization` and `DPoP` the caller gives.
    func sendByHand(
        _ method: HTTPRequest.Method = .get,
        path: String,
        authorization: String,
        proof: String?
    ) async throws -> Response {
        let session = Session(
            configuration: .init(baseURL: env.gateway, maximumRedirects: 0),
            transport: CurlTransport(configuration: .init(proxy: .none, trustedCertificateBundlePath: env.caBundle))
        )
        var request = HTTPRequest(method: method, path: path)
        request.headerFields[.authorization] = authorization
        if let proof { request.headerFields[.dpop] = proof }
        let response = try await session.send(request)
        await session.shutdown()
        return response
    }

    func challenge(_ response: Response) -> String { response.headerFields[.wwwAuthenticate] ?? "" }

    // MARK: Bound tokens from every grant

    @Test func clientCredentialsTokensAreBoundAndAccepted() async throws {
        let key = DPoPKey(privateKey: P256.Signing.PrivateKey())
        let (access, transport) = try access(key: key)
        let before = try await gatewayDPoP()
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
        #expect(response.statusCode == 200)
        let token = try #require(try await access.deviceClient.broker.currentToken())
        #expect(token.tokenType == .dpop)
        #expect(token.keyThumbprint == key.thumbprint)
        let introspection = try await introspect(token.accessToken, client: AuthEnvironment.deviceClient)
        #expect(introspection["token_type"] as? String == "DPoP")
        #expect((introspection["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint)
        let sent = try #require(transport.requests.last)
        #expect(sent.headerFields[.authorization] == "DPoP \(token.accessToken)")
        #expect(try DPoPProofReader(try #require(sent.headerFields[.dpop])).thumbprint == key.thumbprint)
        let after = try await gatewayDPoP()
        #expect(count(after, "proofs_accepted") - count(before, "proofs_accepted") == 1)
        #expect(count(after, "independent_accepted") - count(before, "independent_accepted") == 1)
        #expect(count(after, "proofs_refused") == count(before, "proofs_refused"))
        await access.shutdown()
    }

    @Test func passwordAndRefreshTokensAreBoundToTheSameKey() async throws {
        let key = DPoPKey.generate()
        let (access, _) = try access(key: nil, userKey: key)
        let first = try await access.userClient.authenticate(username: "alice", password: "wonderland")
        #expect(first.keyThumbprint == key.thumbprint)
        // Handed to the app without the private key; the broker (and the store) keep it.
        #expect(first.generatedKey == nil)
        #expect(try await access.userClient.broker.currentToken()?.generatedKey?.key == key)
        let delta = try await admin.grantDelta {
            try await admin.expireAll()
            let response = try await access.userClient.sendAuthenticatedRequest(
                ResourceRequest(path: "/api/user/profile")
            )
            #expect(response.statusCode == 200)
        }
        #expect(delta == ["refresh_token": 1])
        let renewed = try #require(try await access.userClient.broker.currentToken())
        #expect(renewed.accessToken != first.accessToken)
        #expect(renewed.tokenType == .dpop)
        #expect(renewed.keyThumbprint == key.thumbprint)
        let introspection = try await introspect(renewed.accessToken, client: AuthEnvironment.userClient)
        #expect((introspection["cnf"] as? [String: Any])?["jkt"] as? String == key.thumbprint)
        await access.shutdown()
    }

    @Test func aBearerClientIsRefusedWhenTheServerRequiresDPoP() async throws {
        _ = try await admin.json(.post, "/admin/dpop?require=true")
        let (bearer, _) = try access(key: nil)
        let error = await #expect(throws: CourierError(.grantRejected)) { try await bearer.deviceClient.authenticate() }
        #expect(error?.oauthError?.code == .invalidDPoPProof)
        let (bound, _) = try access(key: DPoPKey.generate())
        #expect(try await bound.deviceClient.authenticate().tokenType == .dpop)
        _ = try await admin.json(.post, "/admin/dpop?require=false")
        await bearer.shutdown()
        await bound.shutdown()
    }

    // MARK: Refusals

    @Test func copiedProofsAndTokensAreRefused() async throws {
        let key = DPoPKey.generate()
        let (access, transport) = try access(key: key)
        #expect(
            try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info")).statusCode
                == 200
        )
        let sent = try #require(transport.requests.last)
        let authorization = try #require(sent.headerFields[.authorization])
        let proof = try #require(sent.headerFields[.dpop])
        let token = String(authorization.dropFirst("DPoP ".count))
        let before = try await gatewayDPoP()

        // The proof Courier sent, sent again: a replay.
        let replay = try await sendByHand(path: "/api/device/info", authorization: authorization, proof: proof)
        #expect(replay.statusCode == 401)
        #expect(challenge(replay).contains("invalid_dpop_proof"))
        // A fresh proof of the right key, but for another URL, and for another method.
        let elsewhere = try DPoPProof.make(
            key: key,
            method: .get,
            targetURI: env.gateway.absoluteString + "/api/user/profile",
            accessToken: token
        )
        let misdirected = try await sendByHand(path: "/api/device/info", authorization: authorization, proof: elsewhere)
        #expect(misdirected.statusCode == 401)
        let posted = try DPoPProof.make(
            key: key,
            method: .post,
            targetURI: env.gateway.absoluteString + "/api/device/info",
            accessToken: token
        )
        let wrongMethod = try await sendByHand(path: "/api/device/info", authorization: authorization, proof: posted)
        #expect(wrongMethod.statusCode == 401)
        // The token without the key: as a bearer token, and with a proof of another key.
        let stolen = try await sendByHand(path: "/api/device/info", authorization: "Bearer \(token)", proof: nil)
        #expect(stolen.statusCode == 401)
        #expect(challenge(stolen).contains("DPoP") && challenge(stolen).contains("invalid_token"))
        let thief = try DPoPProof.make(
            key: DPoPKey.generate(),
            method: .get,
            targetURI: env.gateway.absoluteString + "/api/device/info",
            accessToken: token
        )
        let otherKey = try await sendByHand(path: "/api/device/info", authorization: authorization, proof: thief)
        #expect(otherKey.statusCode == 401)
        #expect(challenge(otherKey).contains("invalid_dpop_proof"))
        // And a fresh proof of the right key is still good: nothing above was refused by chance.
        let fresh = try DPoPProof.make(
            key: key,
            method: .get,
            targetURI: env.gateway.absoluteString + "/api/device/info",
            accessToken: token
        )
        #expect(
            try await sendByHand(path: "/api/device/info", authorization: authorization, proof: fresh).statusCode == 200
        )

        let after = try await gatewayDPoP()
        #expect(count(after, "replays_refused") - count(before, "replays_refused") == 1)
        #expect(count(after, "proofs_refused") - count(before, "proofs_refused") >= 4)
        await access.shutdown()
    }

    // MARK: Nonces

    @Test func theTokenEndpointsNonceChallengeIsAnsweredOnce() async throws {
        _ = try await admin.json(.post, "/admin/dpop?nonce=true")
        let before = try await admin.json(.get, "/admin/dpop")
        let (access, _) = try access(key: DPoPKey.generate())
        let token = try await access.deviceClient.authenticate()
        #expect(token.tokenType == .dpop)
        let middle = try await admin.json(.get, "/admin/dpop")
        #expect(count(middle, "nonce_challenges") - count(before, "nonce_challenges") == 1)
        // The nonce of the success is used next time: no second challenge.
        try await admin.expireAll()
        #expect(
            try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info")).statusCode
                == 200
        )
        let after = try await admin.json(.get, "/admin/dpop")
        #expect(count(after, "nonce_challenges") == count(middle, "nonce_challenges"))
        #expect(count(after, "proofs_refused") == count(before, "proofs_refused"))
        _ = try await admin.json(.post, "/admin/dpop?nonce=false")
        await access.shutdown()
    }

    @Test func theGatewaysNonceChallengeIsAnsweredOnce() async throws {
        let (access, transport) = try access(key: DPoPKey.generate())
        _ = try await access.deviceClient.authenticate()
        _ = try await gatewayDPoP(nonce: true)
        let before = try await gatewayDPoP()
        let first = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
        #expect(first.statusCode == 200)
        let second = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
        #expect(second.statusCode == 200)
        let after = try await gatewayDPoP()
        #expect(count(after, "nonce_challenges") - count(before, "nonce_challenges") == 1)
        #expect(transport.requests.count == 3)  // one challenged, its answer, and one with the remembered nonce
        _ = try await gatewayDPoP(nonce: false)
        await access.shutdown()
    }

    // MARK: Many requests, many processes

    @Test func aThousandConcurrentRequestsEachCarryAFreshProof() async throws {
        let (access, transport) = try access(key: DPoPKey.generate())
        _ = try await access.deviceClient.authenticate()
        let before = try await gatewayDPoP()
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<1000 {
                group.addTask {
                    try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
                        .statusCode
                }
            }
            return try await group.reduce(into: [Int]()) { $0.append($1) }
        }
        #expect(statuses.count == 1000)
        #expect(statuses.allSatisfy { $0 == 200 })
        let after = try await gatewayDPoP()
        #expect(count(after, "distinct_jti") - count(before, "distinct_jti") == 1000)
        #expect(count(after, "proofs_accepted") - count(before, "proofs_accepted") == 1000)
        #expect(count(after, "proofs_refused") == count(before, "proofs_refused"))
        #expect(count(after, "replays_refused") == count(before, "replays_refused"))
        let jtis = try transport.requests.map {
            try DPoPProofReader(try #require($0.headerFields[.dpop])).claims["jti"] as? String
        }
        #expect(Set(jtis).count == 1000)
        await access.shutdown()
    }

    @Test func twoProcessesSharingAStoreAndAKeyUseOneToken() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dpop-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let storeKey = SymmetricKey(size: .bits256)
        let pem = P256.Signing.PrivateKey().pemRepresentation
        let delta = try await admin.grantDelta {
            let (first, _) = try access(
                key: try DPoPKey(pem: pem),
                store: EncryptedFileTokenStore(path: path, keyProvider: .key(storeKey))
            )
            let (second, _) = try access(
                key: try DPoPKey(pem: pem),
                store: EncryptedFileTokenStore(path: path, keyProvider: .key(storeKey))
            )
            let request = ResourceRequest(path: "/api/device/info")
            #expect(try await first.deviceClient.sendAnonymousRequest(request).statusCode == 200)
            #expect(try await second.deviceClient.sendAnonymousRequest(request).statusCode == 200)
            let one = try await first.deviceClient.broker.currentToken()
            let two = try await second.deviceClient.broker.currentToken()
            #expect(one?.accessToken == two?.accessToken)
            await first.shutdown()
            await second.shutdown()
        }
        #expect(delta == ["client_credentials": 1])
        // The supplied key was never written: the sealed file opens to a token without key material.
        let stored = try await EncryptedFileTokenStore(path: path, keyProvider: .key(storeKey)).token(
            for: TokenStoreKey(clientID: AuthEnvironment.deviceClient.clientID, level: .device)
        )
        #expect(stored?.keyThumbprint != nil)
        #expect(stored?.generatedKey == nil)
    }

    @Test func aStoredTokenBoundToAnotherKeyIsNotSent() async throws {
        let store = InMemoryTokenStore()
        let (first, _) = try access(key: DPoPKey.generate(), store: store)
        let foreign = try await first.deviceClient.authenticate()
        await first.shutdown()
        // The next process supplies its own key: the stored token is bound to another.
        let key = DPoPKey(privateKey: P256.Signing.PrivateKey())
        let (second, transport) = try access(key: key, store: store)
        let delta = try await admin.grantDelta {
            let response = try await second.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
            #expect(response.statusCode == 200)
        }
        #expect(delta == ["client_credentials": 1])
        #expect(transport.requests.allSatisfy { $0.headerFields[.authorization] != "DPoP \(foreign.accessToken)" })
        let now = try #require(try await second.deviceClient.broker.currentToken())
        #expect(now.keyThumbprint == key.thumbprint)
        await second.shutdown()
    }

    @Test func aRestartedProcessKeepsItsGeneratedKeyFromTheStore() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-dpop-\(UUID().uuidString)")
            .path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let storeKey = SymmetricKey(size: .bits256)
        let (before, _) = try access(
            key: DPoPKey.generate(),
            store: EncryptedFileTokenStore(path: path, keyProvider: .key(storeKey))
        )
        let token = try await before.deviceClient.authenticate()
        await before.shutdown()
        // After the restart, a new generated key is configured; the stored token keeps its own.
        let (after, transport) = try access(
            key: DPoPKey.generate(),
            store: EncryptedFileTokenStore(path: path, keyProvider: .key(storeKey))
        )
        let delta = try await admin.grantDelta {
            let response = try await after.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
            #expect(response.statusCode == 200)
        }
        #expect(delta.isEmpty)
        let sent = try #require(transport.requests.last)
        #expect(sent.headerFields[.authorization] == "DPoP \(token.accessToken)")
        #expect(try DPoPProofReader(try #require(sent.headerFields[.dpop])).thumbprint == token.keyThumbprint)
        await after.shutdown()
    }
}
