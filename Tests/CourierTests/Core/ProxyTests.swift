import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// CurlTransport through the suite's forward proxy (`Tests/Servers/proxy.py`): plain
/// HTTP as absolute-form requests, HTTPS through CONNECT tunnels, Basic proxy
/// authentication. The proxy logs one line per request or tunnel before it answers.
///
/// (`.none` ignoring an `http_proxy` environment variable is not tested: the
/// variable would have to be set for the whole test process.)
@Suite(.timeLimit(.minutes(2)))
struct ProxyTests {
    @Test func plainHTTPGoesThroughTheProxy() async throws {
        let env = try await TestServers.shared()
        let proxy = try #require(env.proxy, "proxy not started: \(env.serviceErrors)")
        let (session, transport) = Self.session(baseURL: env.nginxHTTP, proxy: proxy.absoluteString, env: env)
        let marker = UUID().uuidString
        let file = env.file("1k")

        let response = try await session.send(HTTPRequest(method: .get, path: "\(file.urlPath)?proxy=\(marker)"))
        #expect(response.status == .ok)
        #expect(response.data.sha256Hex == file.sha256)
        #expect(response.metrics?.httpVersion == .http1_1)

        let entries = try env.proxyLogEntries().filter { $0.target.contains(marker) }
        #expect(entries.count == 1)
        #expect(entries.first?.method == "GET")
        #expect(entries.first?.target == "\(env.nginxHTTP.absoluteString)\(file.urlPath)?proxy=\(marker)")
        #expect(entries.first?.listener == "open")
        #expect(entries.first?.proxyAuthorization == false)
        #expect(entries.first?.status == 200)

        // The origin saw the request the proxy forwarded (it adds `Via`).
        let echo = try await session.send(
            HTTPRequest(method: .post, path: "/echo?proxy=\(marker)"),
            body: .data(Data("through the proxy".utf8))
        )
        let json = try #require(try JSONSerialization.jsonObject(with: echo.data) as? [String: Any])
        let headers = try #require(json["headers"] as? [String: String])
        #expect(headers["via"] == "1.1 courier-proxy")
        #expect(json["length"] as? Int == 17)
        #expect(
            try env.proxyLogEntries().contains { $0.method == "POST" && $0.target.hasSuffix("/echo?proxy=\(marker)") }
        )

        await session.shutdown()
        await transport.shutdown()
    }

    @Test func httpsTunnelsThroughConnect() async throws {
        let env = try await TestServers.shared()
        let proxy = try #require(env.proxy, "proxy not started: \(env.serviceErrors)")
        let (session, transport) = Self.session(baseURL: env.nginxHTTPS, proxy: proxy.absoluteString, env: env)
        let authority = try #require(Self.authority(env.nginxHTTPS))
        let before = try env.proxyLogEntries().count
        let file = env.file("1m")

        let response = try await session.send(HTTPRequest(method: .get, path: file.urlPath))
        #expect(response.status == .ok)
        #expect(response.data.count == file.size)
        #expect(response.data.sha256Hex == file.sha256)
        // TLS is end to end: ALPN still negotiates HTTP/2 with nginx through the tunnel.
        #expect(response.metrics?.httpVersion == .http2)
        #expect(response.metrics.map { $0.tlsHandshake > .zero } == true)

        let added = try env.proxyLogEntries().dropFirst(before)
        // (Other tests may tunnel to the same server through the `auth` port meanwhile.)
        let tunnels = added.filter { $0.method == "CONNECT" && $0.target == authority && $0.listener == "open" }
        #expect(tunnels.count >= 1)
        #expect(tunnels.allSatisfy { $0.status == 200 && !$0.proxyAuthorization })
        // The proxy never saw a request inside the tunnel.
        #expect(!added.contains { $0.method == "GET" && $0.target.contains(authority) })

        await session.shutdown()
        await transport.shutdown()
    }

    @Test func certificateIsStillVerifiedThroughTheTunnel() async throws {
        let env = try await TestServers.shared()
        let proxy = try #require(env.proxy, "proxy not started: \(env.serviceErrors)")
        // The attacker's chain goes to another root: the tunnel opens, the handshake must fail.
        let (session, transport) = Self.session(baseURL: env.nginxAttacker, proxy: proxy.absoluteString, env: env)
        let authority = try #require(Self.authority(env.nginxAttacker))
        let before = try env.proxyLogEntries().count
        // Other suites reach the attacker on purpose: only this request's marker must be absent.
        let marker = SecuritySupport.uniquePath("/bytes/1k")

        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.kind == .tlsFailure)
        #expect(error?.curlCode == 60)
        let added = try env.proxyLogEntries().dropFirst(before)
        #expect(added.contains { $0.method == "CONNECT" && $0.target == authority && $0.status == 200 })
        try await SecuritySupport.expectNeverReached(env, .attacker, marker: marker)

        // Without the test CA the real server is not trusted either.
        let untrusting = CurlTransport(configuration: .init(proxy: .url(proxy.absoluteString)))
        let plain = Session(configuration: .init(baseURL: env.nginxHTTPS), transport: untrusting)
        let second = await #expect(throws: CourierError.self) {
            try await plain.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        }
        #expect(second?.kind == .tlsFailure)

        await session.shutdown()
        await transport.shutdown()
        await plain.shutdown()
        await untrusting.shutdown()
    }

    @Test func proxyThatIsDownIsCouldNotConnect() async throws {
        let env = try await TestServers.shared()
        let port = try freePort()
        let (session, transport) = Self.session(baseURL: env.nginxHTTP, proxy: "http://127.0.0.1:\(port)", env: env)
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        }
        #expect(error?.kind == .couldNotConnect)
        #expect(error?.curlCode == 7)

        // The same over HTTPS (curl would send CONNECT first).
        let (tlsSession, tlsTransport) = Self.session(
            baseURL: env.nginxHTTPS,
            proxy: "http://127.0.0.1:\(port)",
            env: env
        )
        let tlsError = await #expect(throws: CourierError.self) {
            try await tlsSession.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        }
        #expect(tlsError?.kind == .couldNotConnect)

        await session.shutdown()
        await transport.shutdown()
        await tlsSession.shutdown()
        await tlsTransport.shutdown()
    }

    @Test func proxyRefusesTargetsOffThisMachine() async throws {
        let env = try await TestServers.shared()
        let proxy = try #require(env.proxy, "proxy not started: \(env.serviceErrors)")
        // Resolved by the proxy, not by curl: the proxy answers 403 without a lookup.
        let (session, transport) = Self.session(
            baseURL: URL(string: "http://courier-test.invalid")!,
            proxy: proxy.absoluteString,
            env: env
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/"))
        #expect(response.status == .forbidden)
        #expect(
            try env.proxyLogEntries().contains {
                $0.target == "http://courier-test.invalid/" && $0.status == 403
            }
        )
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func excludedHostsBypassTheProxy() async throws {
        let env = try await TestServers.shared()
        let proxy = try #require(env.proxy, "proxy not started: \(env.serviceErrors)")
        let transport = CurlTransport(
            configuration: .init(
                proxy: .url(proxy.absoluteString, excludedHosts: ["127.0.0.1"]),
                trustedCertificateBundlePath: env.caBundle
            )
        )
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        let marker = UUID().uuidString
        let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k?bypass=\(marker)"))
        #expect(response.status == .ok)
        #expect(try env.proxyLogEntries().allSatisfy { !$0.target.contains(marker) })
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func authenticatingProxyWantsCredentials() async throws {
        let env = try await TestServers.shared()
        let proxy = try #require(env.authenticatingProxy, "proxy not started: \(env.serviceErrors)")
        let withCredentials = try #require(env.authenticatingProxyWithCredentials)
        let marker = UUID().uuidString

        // Plain HTTP without credentials: the proxy's 407 is the response.
        let (anonymous, anonymousTransport) = Self.session(
            baseURL: env.nginxHTTP,
            proxy: proxy.absoluteString,
            env: env
        )
        let refused = try await anonymous.send(HTTPRequest(method: .get, path: "/bytes/1k?anonymous=\(marker)"))
        #expect(refused.status == .proxyAuthenticationRequired)
        #expect(refused.headerFields[HTTPField.Name("Proxy-Authenticate")!]?.hasPrefix("Basic") == true)

        // HTTPS without credentials: the CONNECT is refused, no tunnel, a transport error.
        let (anonymousTLS, anonymousTLSTransport) = Self.session(
            baseURL: env.nginxHTTPS,
            proxy: proxy.absoluteString,
            env: env
        )
        let before = try env.proxyLogEntries().count
        let error = await #expect(throws: CourierError.self) {
            try await anonymousTLS.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        }
        #expect(error?.kind == .proxyFailure)
        #expect(error?.message.contains("407") == true)
        #expect(error?.curlCode == 56)  // CURLE_RECV_ERROR: "CONNECT tunnel failed, response 407"
        #expect(
            try env.proxyLogEntries().dropFirst(before).contains {
                $0.method == "CONNECT" && $0.status == 407 && $0.listener == "auth"
            }
        )

        // With user:password in the proxy URL, both work and carry Proxy-Authorization.
        let (session, transport) = Self.session(baseURL: env.nginxHTTP, proxy: withCredentials.absoluteString, env: env)
        let plain = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k?authenticated=\(marker)"))
        #expect(plain.status == .ok)
        #expect(plain.data.sha256Hex == env.file("1k").sha256)
        let (tlsSession, tlsTransport) = Self.session(
            baseURL: env.nginxHTTPS,
            proxy: withCredentials.absoluteString,
            env: env
        )
        let tls = try await tlsSession.send(HTTPRequest(method: .get, path: "/bytes/1k?authenticated=\(marker)"))
        #expect(tls.status == .ok)
        #expect(tls.data.sha256Hex == env.file("1k").sha256)

        let entries = try env.proxyLogEntries().filter { $0.listener == "auth" }
        #expect(
            entries.contains {
                $0.target.hasSuffix("?anonymous=\(marker)") && $0.status == 407 && !$0.proxyAuthorization
            }
        )
        #expect(
            entries.contains {
                $0.target.hasSuffix("?authenticated=\(marker)") && $0.status == 200 && $0.proxyAuthorization
            }
        )
        let httpsAuthority = try #require(Self.authority(env.nginxHTTPS))
        #expect(
            entries.contains {
                $0.method == "CONNECT" && $0.target == httpsAuthority && $0.status == 200 && $0.proxyAuthorization
            }
        )

        for s in [anonymous, anonymousTLS, session, tlsSession] { await s.shutdown() }
        for t in [anonymousTransport, anonymousTLSTransport, transport, tlsTransport] { await t.shutdown() }
    }

    // MARK: - Helpers

    /// A session through `proxy` that trusts the suite's CA.
    private static func session(baseURL: URL, proxy: String, env: TestEnvironment) -> (Session, CurlTransport) {
        let transport = CurlTransport(
            configuration: .init(proxy: .url(proxy), trustedCertificateBundlePath: env.caBundle)
        )
        return (Session(configuration: .init(baseURL: baseURL), transport: transport), transport)
    }

    /// `host:port` of a URL, as it appears in a CONNECT line.
    private static func authority(_ url: URL) -> String? {
        guard let host = url.host, let port = url.port else { return nil }
        return "\(host):\(port)"
    }
}
