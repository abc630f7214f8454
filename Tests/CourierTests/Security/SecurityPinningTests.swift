import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// SPKI pins matched against the verified chain (leaf, intermediate, root), pinned CA
/// bundles, and the attacker whose chain verifies but whose keys are not pinned.
@Suite(.timeLimit(.minutes(2)))
struct SecurityPinningTests {
    enum ChainPosition: String, CaseIterable, Sendable {
        case leaf, intermediate, root
    }

    @Test("a pin of any certificate of the verified chain is accepted", arguments: ChainPosition.allCases)
    func acceptsAPinOfAnyChainCertificate(position: ChainPosition) async throws {
        let env = try await TestServers.shared()
        let base64 =
            switch position {
            case .leaf: env.leafPin
            case .intermediate: env.intermediatePin
            case .root: env.rootPin
            }
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(base64)])]
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        #expect(response.status == .ok)
        #expect(response.data.count == 1024)
        await SecuritySupport.close(session)
    }

    @Test func acceptsABackupPinNextToAnUnrelatedOne() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: [
                try TrustPolicy(
                    host: "127.0.0.1",
                    pins: [SecuritySupport.unrelatedPin, try SecuritySupport.pin(env.leafPin)]
                )
            ]
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
        #expect(response.status == .ok)
        await SecuritySupport.close(session)
    }

    @Test func acceptsPinsComputedFromTheCertificateFiles() async throws {
        let env = try await TestServers.shared()
        let fromLeaf = try SPKIPin(certificateFile: env.leafCertificate)
        #expect(fromLeaf.base64 == env.leafPin)
        let chain = try SPKIPin.pins(fromCertificateFile: env.leafChain)
        #expect(chain.map(\.base64) == [env.leafPin, env.intermediatePin])
        #expect(try SPKIPin(certificateFile: env.caBundle).base64 == env.rootPin)
        let session = try SecuritySupport.session(env, trust: [try TrustPolicy(host: "127.0.0.1", pins: [fromLeaf])])
        #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .ok)
        await SecuritySupport.close(session)
    }

    @Test func acceptsThePinnedCABundleInsteadOfTheSystemStore() async throws {
        let env = try await TestServers.shared()
        // The transport uses the real system store, which does not know the suite's root:
        // only the policy's pinned bundle makes the chain verify.
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pinnedCertificateAuthorities: env.caBundle)],
            caBundle: .some(nil)
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        #expect(response.status == .ok)
        await SecuritySupport.close(session)
    }

    @Test func refusesAChainThatDoesNotVerifyAgainstThePinnedCABundle() async throws {
        let env = try await TestServers.shared()
        // The transport's bundle trusts the suite's root, but the policy pins the attacker's
        // root set: the pinned bundle replaces the transport's for this host.
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pinnedCertificateAuthorities: env.attackerCA)]
        )
        let marker = SecuritySupport.uniquePath()
        await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func refusesTheAttackerWhoseRootIsTrustedButWhoseKeysAreNotPinned() async throws {
        let env = try await TestServers.shared()
        let bothRoots = try SecuritySupport.bundleWithAttackerRoot(env)
        defer { try? FileManager.default.removeItem(atPath: bothRoots) }
        let pins = try [env.leafPin, env.intermediatePin, env.rootPin].map(SecuritySupport.pin)
        let session = try SecuritySupport.session(
            env,
            .attacker,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: pins)],
            caBundle: .some(bothRoots)
        )
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.pinMismatch)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.host == "127.0.0.1")
        #expect(error?.expectedPins == pins)
        for pin in pins { #expect(error?.message.contains(pin.description) == true) }
        #expect(error?.message.contains("127.0.0.1") == true)

        // Without pins the same bundle accepts the attacker: the chain itself is valid.
        let unpinned = Session(
            configuration: .init(baseURL: env.nginxAttacker),
            transport: CurlTransport(configuration: .init(proxy: .none, trustedCertificateBundlePath: bothRoots))
        )
        let control = try await unpinned.send(HTTPRequest(method: .get, path: "/bytes/0"))
        #expect(control.status == .ok)
        await SecuritySupport.close(unpinned)

        // The attacker never saw the pinned request.
        try await SecuritySupport.expectNeverReached(env, .attacker, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func aPinnedCABundleNeverLeaksIntoOtherHostsOfTheTransport() async throws {
        let env = try await TestServers.shared()
        // localhost trusts the suite's root through its pinned bundle; 127.0.0.1 is pinned
        // but verified against the real system store, which does not know that root. libcurl
        // fills and caches the SSL_CTX's store after the TLS hook runs, so the pinned roots
        // must stay out of that store: 127.0.0.1 has to fail, before and after localhost.
        let session = try SecuritySupport.session(
            env,
            trust: [
                try TrustPolicy(host: "localhost", pinnedCertificateAuthorities: env.caBundle),
                try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.rootPin)]),
            ],
            caBundle: .some(nil)
        )
        let port = env.nginxHTTPS.port!
        await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
        }
        for _ in 0..<2 {
            let trusted = try await session.send(
                HTTPRequest(method: .get, scheme: "https", authority: "localhost:\(port)", path: "/bytes/0")
            )
            #expect(trusted.status == .ok)
            await #expect(throws: CourierError(.tlsFailure)) {
                try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
            }
        }
        await SecuritySupport.close(session)
    }

    @Test func pinsAreCheckedOnEveryNewConnectionNotOnlyTheFirst() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [SecuritySupport.unrelatedPin])],
            allowsHTTP2: false
        )
        for _ in 0..<3 {
            await #expect(throws: CourierError(.pinMismatch)) {
                try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
            }
        }
        await SecuritySupport.close(session)
    }

    @Test func matchesWildcardPoliciesOneLabelDeep() throws {
        let policy = try TrustPolicy(host: "*.Example.com.", pins: [SecuritySupport.unrelatedPin])
        #expect(policy.host == "*.example.com")
        #expect(policy.matches(host: "api.example.com", port: 443))
        #expect(policy.matches(host: "API.EXAMPLE.COM.", port: 443))
        #expect(!policy.matches(host: "example.com", port: 443))
        #expect(!policy.matches(host: "a.b.example.com", port: 443))
        #expect(!policy.matches(host: "evilexample.com", port: 443))
        let security = try SecurityConfiguration.secured(trust: [
            policy, try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin]),
        ])
        // The exact host wins over the wildcard.
        #expect(security.trustPolicy(forHost: "api.example.com")?.host == "api.example.com")
        #expect(security.trustPolicy(forHost: "cdn.example.com")?.host == "*.example.com")
        #expect(security.trustPolicy(forHost: "example.org") == nil)
    }

    // MARK: Port-aware policies against the real TLS listener

    @Test func aPolicyForAnotherPortOfTheHostDoesNotTrustTheListener() async throws {
        let env = try await TestServers.shared()
        let port = try #require(env.nginxHTTPS.port)
        let otherPort = port == 65535 ? port - 1 : port + 1
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", port: otherPort, pins: [try SecuritySupport.pin(env.rootPin)])],
            credentials: ("port-token-\(UUID().uuidString)", "session=port-cookie")
        )
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        // The host and port that have no policy, as the request named them.
        #expect(error?.host == "127.0.0.1:\(port)")
        #expect(error?.message.contains("127.0.0.1:\(port)") == true)
        #expect(error?.message.contains("nothing was sent") == true)

        // Bypassing the session, the transport refuses the connection in the handshake.
        let transport = try #require(session.transport as? CurlTransport)
        let bypassMarker = SecuritySupport.uniquePath()
        let refused = await #expect(throws: CourierError(.untrustedHost)) {
            try await transport.execute(
                HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(port)", path: bypassMarker),
                body: nil,
                options: TransferOptions(),
                control: TransferControl()
            )
        }
        #expect(refused?.host == "127.0.0.1:\(port)")
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
        #expect(try SecuritySupport.logEntries(env, .https, containing: bypassMarker).isEmpty)
        await SecuritySupport.close(session)
    }

    @Test func aPolicyNamingTheListenersPortTrustsIt() async throws {
        let env = try await TestServers.shared()
        let port = try #require(env.nginxHTTPS.port)
        let token = "port-token-\(UUID().uuidString)"
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", port: port, pins: [try SecuritySupport.pin(env.leafPin)])],
            credentials: (token, "session=port-cookie")
        )
        #expect(session.transport.security.trustPolicy(forHost: "127.0.0.1", port: port)?.port == port)
        let response = try await session.send(HTTPRequest(method: .get, path: "/httpbin/headers"))
        #expect(response.status == .ok)
        #expect(try SecuritySupport.echoedHeaders(response)["authorization"] == "Bearer \(token)")
        await SecuritySupport.close(session)
    }

    @Test func thePolicyNamingTheListenersPortWinsOverThePortlessOne() async throws {
        let env = try await TestServers.shared()
        let port = try #require(env.nginxHTTPS.port)
        // The portless policy would pass; the one for this very port pins an unrelated key.
        let session = try SecuritySupport.session(
            env,
            trust: [
                try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.rootPin)]),
                try TrustPolicy(host: "127.0.0.1", port: port, pins: [SecuritySupport.unrelatedPin]),
            ]
        )
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.pinMismatch)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.host == "127.0.0.1")
        #expect(error?.expectedPins == [SecuritySupport.unrelatedPin])
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
        await SecuritySupport.close(session)

        // Swapped: the port's policy passes although the portless one would not.
        let swapped = try SecuritySupport.session(
            env,
            trust: [
                try TrustPolicy(host: "127.0.0.1", pins: [SecuritySupport.unrelatedPin]),
                try TrustPolicy(host: "127.0.0.1", port: port, pins: [try SecuritySupport.pin(env.rootPin)]),
            ]
        )
        #expect(try await swapped.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .ok)
        await SecuritySupport.close(swapped)
    }
}
