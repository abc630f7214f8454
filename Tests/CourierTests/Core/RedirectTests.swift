import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Redirects are followed by the session, with one set of rules for every transport,
/// against nginx (HTTP/2 over TLS) and httpbin behind it.
@Suite(.timeLimit(.minutes(1)))
struct RedirectTests {
    /// What `/echo` saw.
    private struct Received: Decodable {
        let method: String
        let length: Int
        let sha256: String
        let headers: [String: String]
    }

    /// httpbin's echo, for hops to other origins.
    private struct Echo: Decodable {
        let headers: [String: String]
        func header(_ name: String) -> String? {
            headers.first { $0.key.lowercased() == name }?.value
        }
    }

    private func redirect(_ status: Int, to target: String = "/httpbin/anything") -> String {
        let encoded = target.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? target
        return "/httpbin/redirect-to?url=\(encoded)&status_code=\(status)"
    }

    @Test(arguments: [307, 308])
    func aReplayableBodyIsSentAgainOverHTTP2(status: Int) async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let body = Data(String(repeating: "courier ", count: 16 << 10).utf8)  // 128 KiB
        let response = try await session.send(
            HTTPRequest(method: .post, path: "/redirect/same-origin-\(status)"),
            body: .data(body)
        )
        #expect(response.status == .ok)
        #expect(response.metrics?.httpVersion == .http2)
        #expect(response.metrics?.redirectCount == 1)
        #expect(response.metrics?.redirectChain == [env.url(.https, "/echo")])
        let received = try JSONDecoder().decode(Received.self, from: response.data)
        #expect(received.method == "POST")
        #expect(received.length == body.count)
        #expect(received.sha256 == body.sha256Hex)
        await session.shutdown()
    }

    @Test func aFileBodyIsSentAgainOnA307() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let path = FileManager.default.temporaryDirectory.appending(path: "courier-redirect-\(UUID().uuidString)").path
        let content = Data("from a file".utf8)
        try content.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let response = try await session.send(
            HTTPRequest(method: .put, path: "/redirect/same-origin-307"),
            body: try .file(atPath: path)
        )
        let received = try JSONDecoder().decode(Received.self, from: response.data)
        #expect(received.method == "PUT")
        #expect(received.sha256 == content.sha256Hex)
        await session.shutdown()
    }

    @Test(arguments: [301, 302, 303])
    func aPostBecomesAGetWithoutItsBody(status: Int) async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        var request = HTTPRequest(method: .post, path: "/redirect/same-origin-\(status)")
        request.headerFields[.contentType] = "text/plain"
        request.headerFields[.contentLanguage] = "en"
        let response = try await session.send(request, body: .string("left behind"))
        let received = try JSONDecoder().decode(Received.self, from: response.data)
        #expect(received.method == "GET")
        #expect(received.length == 0)
        #expect(received.headers["content-type"] == nil)
        #expect(received.headers["content-language"] == nil)
        await session.shutdown()
    }

    @Test func aPutKeepsItsMethodAndBodyOnA302ButNotOnA303() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let kept = try await session.send(
            HTTPRequest(method: .put, path: "/redirect/same-origin-302"),
            body: .string("kept")
        )
        let keptReceived = try JSONDecoder().decode(Received.self, from: kept.data)
        #expect(keptReceived.method == "PUT")
        #expect(keptReceived.sha256 == Data("kept".utf8).sha256Hex)
        let seeOther = try await session.send(
            HTTPRequest(method: .put, path: "/redirect/same-origin-303"),
            body: .string("gone")
        )
        let seeOtherReceived = try JSONDecoder().decode(Received.self, from: seeOther.data)
        #expect(seeOtherReceived.method == "GET")
        #expect(seeOtherReceived.length == 0)
        await session.shutdown()
    }

    @Test func aBodyThatCanBeSentOnceIsNotSentTwice() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let chunks = AsyncStream<Data> { continuation in
            continuation.yield(Data("once".utf8))
            continuation.finish()
        }
        let response = try await session.send(
            HTTPRequest(method: .post, path: "/redirect/same-origin-307"),
            body: .stream(chunks, length: 4)
        )
        // The caller gets the redirect and decides.
        #expect(response.status.code == 307)
        #expect(response.headerFields[.location]?.hasSuffix("/echo") == true)
        #expect(response.metrics?.redirectChain == [])
        await session.shutdown()
    }

    @Test func aHopToAnotherOriginLeavesSecretsBehind() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let other = env.url(.https, "/httpbin/anything").absoluteString.replacingOccurrences(
            of: "127.0.0.1",
            with: "localhost"
        )
        var request = HTTPRequest(method: .get, path: redirect(302, to: other))
        request.headerFields[.authorization] = "Bearer not-for-localhost"
        request.headerFields[.cookie] = "session=not-for-localhost"
        request.headerFields[HTTPField.Name("X-API-Key")!] = "not-for-localhost"
        request.headerFields[HTTPField.Name("X-Trace")!] = "goes-along"
        let response = try await session.send(request)
        let echo = try JSONDecoder().decode(Echo.self, from: response.data)
        #expect(echo.header("host")?.hasPrefix("localhost:") == true)
        #expect(echo.header("authorization") == nil)
        #expect(echo.header("cookie") == nil)
        #expect(echo.header("x-api-key") == nil)
        #expect(echo.header("x-trace") == "goes-along")
        #expect(!String(decoding: response.data, as: UTF8.self).contains("not-for-localhost"))

        // The same fields stay on a hop within the origin.
        var same = HTTPRequest(method: .get, path: redirect(302))
        same.headerFields[.cookie] = "session=same-origin"
        let sameEcho = try JSONDecoder().decode(Echo.self, from: try await session.send(same).data)
        #expect(sameEcho.header("cookie") == "session=same-origin")
        await session.shutdown()
    }

    @Test func theCallerInspectsAndRefusesHops() async throws {
        let env = try await TestServers.shared()
        let seen = LockedBox<[String]>([])
        let following = SessionFactory.httpbin(env) { configuration in
            configuration.shouldFollowRedirect = { response, next in
                seen.withLock { $0.append("\(response.status.code) \(next.method) \(next.path ?? "")") }
                return true
            }
        }
        let followed = try await following.send(HTTPRequest(method: .get, path: "/redirect/2"))
        #expect(followed.status == .ok)
        #expect(seen.withLock { $0 }.count == 2)
        #expect(seen.withLock { $0 }.allSatisfy { $0.hasPrefix("302 GET /") })
        await following.shutdown()

        let refusing = SessionFactory.httpbin(env) { $0.shouldFollowRedirect = { _, _ in false } }
        let refused = try await refusing.send(HTTPRequest(method: .get, path: "/redirect/2"))
        #expect(refused.status.code == 302)
        await refusing.shutdown()

        struct NotThere: Error {}
        let failing = SessionFactory.httpbin(env) { $0.shouldFollowRedirect = { _, _ in throw NotThere() } }
        await #expect(throws: NotThere.self) {
            try await failing.send(HTTPRequest(method: .get, path: "/redirect/1"))
        }
        await failing.shutdown()
    }

    @Test func aLocationThatIsNotHTTPGoesToTheCaller() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let response = try await session.send(HTTPRequest(method: .get, path: redirect(302, to: "ftp://example.com/x")))
        #expect(response.status.code == 302)
        #expect(response.headerFields[.location] == "ftp://example.com/x")
        await session.shutdown()
    }

    @Test func aStreamedResponseFollowsToTheEnd() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let file = env.file("1m")
        let response = try await session.stream(HTTPRequest(method: .get, path: redirect(302, to: file.urlPath)))
        var body = Data()
        for try await chunk in response.body { body.append(chunk) }
        #expect(body.sha256Hex == file.sha256)
        #expect(response.metrics?.redirectCount == 1)
        await session.shutdown()
    }

    /// A 401 from an origin the token never reached says nothing about the token.
    @Test func aRejectionFromAnotherOriginRenewsNothing() async throws {
        let env = try await TestServers.shared()
        let pins = [try SecuritySupport.pin(env.rootPin)]
        let trust = [try TrustPolicy(host: "127.0.0.1", pins: pins), try TrustPolicy(host: "localhost", pins: pins)]
        let grant = ScriptedGrant(clock: TestClock(Date()))
        let broker = AuthFixtures.broker(grant: grant, clock: TestClock(Date()))
        let bearer = BearerTokenMiddleware(broker: broker, policy: try SecurityConfiguration.secured(trust: trust))
        let session = try SecuritySupport.session(env, trust: trust, middlewares: [bearer])

        let elsewhere = try await session.send(HTTPRequest(method: .get, path: "/redirect/cross-origin-401"))
        #expect(elsewhere.status.code == 401)
        #expect(elsewhere.metrics?.redirectChain.first?.host == "localhost")
        #expect(grant.calls == 1)  // the first token, and no renewal

        // Back to the first origin after another: the token stayed behind at the first hop.
        let roundTrip = try await session.send(HTTPRequest(method: .get, path: "/redirect/via-other-origin-401"))
        #expect(roundTrip.status.code == 401)
        #expect(roundTrip.metrics?.redirectChain.last?.host == "127.0.0.1")
        #expect(grant.calls == 1)

        // The control: the same 401 from the origin that got the token renews it once.
        let here = try await session.send(HTTPRequest(method: .get, path: "/unauthorized"))
        #expect(here.status.code == 401)
        #expect(grant.calls == 2)
        await SecuritySupport.close(session)
    }
}
