import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// A host trusted through the system's roots without pins, against the suite's nginx: the
/// suite's CA, given as the transport's bundle, stands in for the system store. Credentials
/// reach the host over verified TLS; expired, wrong-host and foreign chains, hosts outside
/// the trust set and plain HTTP are refused as on pinned hosts.
@Suite(.timeLimit(.minutes(2)))
struct SecuritySystemRootsTests {
    private static let token = "system-roots-token-\(UUID().uuidString)"
    private static let cookie = "session=system-roots-cookie-\(UUID().uuidString)"

    private func systemRoots() throws -> [TrustPolicy] {
        [try TrustPolicy.systemRoots(host: "127.0.0.1")]
    }

    @Test func aCredentialReachesASystemRootsHostOverTLS() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(env, trust: try systemRoots(), credentials: (Self.token, Self.cookie))
        #expect(
            session.transport.security.trustPolicy(forHost: "127.0.0.1", port: env.nginxHTTPS.port!)?.isPinned == false
        )
        let marker = SecuritySupport.uniquePath("/httpbin/headers")
        let response = try await session.send(HTTPRequest(method: .get, path: marker))
        #expect(response.status == .ok)
        let headers = try SecuritySupport.echoedHeaders(response)
        #expect(headers["authorization"] == "Bearer \(Self.token)")
        #expect(headers["cookie"] == Self.cookie)
        // It went over TLS to the HTTPS listener.
        try await SecuritySupport.waitForLogEntry(env, .https, containing: marker)
        let entry = try #require(SecuritySupport.logEntries(env, .https, containing: marker).first)
        #expect(entry.sslProtocol.hasPrefix("TLSv1."))
        #expect(entry.authorization == "yes")
        await SecuritySupport.close(session)
    }

    @Test func theTransportsBundleIsTheStoreThatCounts() async throws {
        let env = try await TestServers.shared()
        // The real system store does not know the suite's root: the chain does not verify.
        let session = try SecuritySupport.session(
            env,
            trust: try systemRoots(),
            caBundle: .some(nil),
            credentials: (Self.token, Self.cookie)
        )
        let marker = SecuritySupport.uniquePath()
        await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func anExpiredCertificateIsRefused() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            .expired,
            trust: try systemRoots(),
            credentials: (Self.token, Self.cookie)
        )
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.message.contains("expired") == true)
        try await SecuritySupport.expectNeverReached(env, .expired, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func aCertificateForAnotherHostIsRefused() async throws {
        let env = try await TestServers.shared()
        // The wronghost chain verifies against the bundle; only its host name is wrong.
        let session = try SecuritySupport.session(
            env,
            .wrongHost,
            trust: try systemRoots(),
            credentials: (Self.token, Self.cookie)
        )
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.message.contains("subject name") == true)
        try await SecuritySupport.expectNeverReached(env, .wrongHost, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func aChainThatDoesNotVerifyAgainstTheStoreIsRefused() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            .attacker,
            trust: try systemRoots(),
            credentials: (Self.token, Self.cookie)
        )
        let marker = SecuritySupport.uniquePath()
        await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        try await SecuritySupport.expectNeverReached(env, .attacker, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func aHostOutsideTheTrustSetGetsNothing() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(env, trust: try systemRoots(), credentials: (Self.token, Self.cookie))
        let port = env.nginxHTTPS.port!
        let marker = SecuritySupport.uniquePath("/httpbin/headers")
        let error = await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(
                HTTPRequest(method: .get, scheme: "https", authority: "localhost:\(port)", path: marker)
            )
        }
        #expect(error?.host == "localhost:\(port)")
        // The gate refuses the credential itself, whatever sends it.
        let security = session.transport.security
        #expect(throws: CourierError(.untrustedHost)) {
            try security.checkCredentialTarget(
                HTTPRequest(method: .get, scheme: "https", authority: "localhost:\(port)", path: marker)
            )
        }
        // Bypassing the session, the handshake refuses the host: it has no policy.
        let transport = try #require(session.transport as? CurlTransport)
        let bypassMarker = SecuritySupport.uniquePath()
        await #expect(throws: CourierError(.untrustedHost)) {
            try await transport.execute(
                HTTPRequest(method: .get, scheme: "https", authority: "localhost:\(port)", path: bypassMarker),
                body: nil,
                options: TransferOptions(),
                control: TransferControl()
            )
        }
        // A redirect there carries nothing either: the hop's handshake is refused.
        await #expect(throws: CourierError(.untrustedHost)) {
            try await session.send(HTTPRequest(method: .get, path: "/redirect/cross-origin"))
        }
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
        #expect(try SecuritySupport.logEntries(env, .https, containing: bypassMarker).isEmpty)
        await SecuritySupport.close(session)
    }

    @Test func plainHTTPIsRefused() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            .http,
            trust: try systemRoots(),
            credentials: (Self.token, Self.cookie)
        )
        let marker = SecuritySupport.uniquePath()
        await #expect(throws: CourierError(.insecureScheme)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        let transport = try #require(session.transport as? CurlTransport)
        await #expect(throws: CourierError.self) {
            try await transport.execute(
                HTTPRequest(
                    method: .get,
                    scheme: "http",
                    authority: env.nginxHTTP.host! + ":\(env.nginxHTTP.port!)",
                    path: marker
                ),
                body: nil,
                options: TransferOptions(),
                control: TransferControl()
            )
        }
        try await SecuritySupport.expectNeverReached(env, .http, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func aPinnedPolicyNamingThePortWinsOverThePortlessSystemRootsOne() async throws {
        let env = try await TestServers.shared()
        let port = try #require(env.nginxHTTPS.port)
        let session = try SecuritySupport.session(
            env,
            trust: [
                try TrustPolicy.systemRoots(host: "127.0.0.1"),
                try TrustPolicy(host: "127.0.0.1", port: port, pins: [SecuritySupport.unrelatedPin]),
            ],
            credentials: (Self.token, Self.cookie)
        )
        // The HTTPS listener's port has the pinned policy, and its key is not pinned.
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.pinMismatch)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.expectedPins == [SecuritySupport.unrelatedPin])
        try await SecuritySupport.expectNeverReached(env, .https, marker: marker)

        // Another listener of the same host has no port policy: the system roots apply.
        let tls12 = try #require(env.nginxTLS12.port)
        let other = try await session.send(
            HTTPRequest(method: .get, scheme: "https", authority: "127.0.0.1:\(tls12)", path: "/bytes/0")
        )
        #expect(other.status == .ok)
        await SecuritySupport.close(session)

        // With the listener's own key pinned for its port, the same request goes through.
        let pinned = try SecuritySupport.session(
            env,
            trust: [
                try TrustPolicy.systemRoots(host: "127.0.0.1"),
                try TrustPolicy(host: "127.0.0.1", port: port, pins: [try SecuritySupport.pin(env.rootPin)]),
            ],
            credentials: (Self.token, Self.cookie)
        )
        let response = try await pinned.send(HTTPRequest(method: .get, path: "/httpbin/headers"))
        #expect(try SecuritySupport.echoedHeaders(response)["authorization"] == "Bearer \(Self.token)")
        await SecuritySupport.close(pinned)
    }
}
