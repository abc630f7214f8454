import Foundation
import HTTPTypes
import InMemoryTracing
import Logging
import Testing

@testable import Courier

/// A session's cookie jar against the real httpbin (plain HTTP/1.1) and nginx (HTTPS, HTTP/2):
/// cookies set on a redirect arrive on the next hop, deleted ones stop, secure ones never come
/// from or go to plain HTTP, and a hop to another host carries only that host's cookies.
@Suite(.timeLimit(.minutes(2)))
struct CookieSessionTests {
    private struct Echo: Decodable {
        let cookies: [String: String]
    }

    private struct Headers: Decodable {
        let headers: [String: String]
    }

    private func get(_ session: Session, _ path: String, headerFields: HTTPFields = [:]) async throws -> Response {
        let response = try await session.send(HTTPRequest(method: .get, path: path, headerFields: headerFields))
        #expect(response.status == .ok, "\(path): \(response.status)")
        return response
    }

    private func cookies(_ response: Response) throws -> [String: String] {
        try JSONDecoder().decode(Echo.self, from: response.data).cookies
    }

    /// The same httpbin as `env.httpbin`, named `localhost` instead of `127.0.0.1`: another host.
    private func localhost(_ env: TestEnvironment, _ path: String) -> String {
        "http://localhost:\(env.httpbin.port!)\(path)"
    }

    @Test func aCookieSetOnARedirectArrivesOnTheNextHop() async throws {
        let env = try await TestServers.shared()
        let jar = CookieJar()
        let session = SessionFactory.httpbin(env) { $0.cookieJar = jar }
        let response = try await get(session, "/cookies/set?k=v")
        #expect(response.metrics?.redirectCount == 1)
        #expect(try cookies(response) == ["k": "v"])
        #expect(jar.cookies.map(\.name) == ["k"])
        #expect(try cookies(try await get(session, "/cookies")) == ["k": "v"])
        await session.shutdown()
    }

    @Test func aDeletedCookieIsNoLongerSent() async throws {
        let env = try await TestServers.shared()
        let jar = CookieJar()
        let session = SessionFactory.httpbin(env) { $0.cookieJar = jar }
        _ = try await get(session, "/cookies/set?k=v&keep=1")
        let response = try await get(session, "/cookies/delete?k")
        #expect(try cookies(response) == ["keep": "1"])
        #expect(jar.cookies.map(\.name) == ["keep"])
        await session.shutdown()
    }

    @Test func aSecureCookieOverPlainHTTPIsNeitherStoredNorSent() async throws {
        let env = try await TestServers.shared()
        let jar = CookieJar()
        let session = SessionFactory.httpbin(env) { $0.cookieJar = jar }
        _ = try await get(session, "/response-headers?Set-Cookie=s%3D1%3B%20Secure%3B%20Path%3D%2F")
        #expect(jar.cookies.isEmpty)
        #expect(try cookies(try await get(session, "/cookies")) == [:])
        await session.shutdown()
    }

    @Test func aHopToAnotherHostCarriesOnlyThatHostsCookies() async throws {
        let env = try await TestServers.shared()
        let jar = CookieJar()
        let session = SessionFactory.httpbin(env) { $0.cookieJar = jar }
        _ = try await get(session, "/cookies/set?here=1")
        _ = try await get(session, localhost(env, "/cookies/set?there=2"))
        let target = localhost(env, "/cookies").addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let away = try await get(session, "/redirect-to?url=\(target)")
        #expect(away.metrics?.redirectChain.first?.host == "localhost")
        #expect(try cookies(away) == ["there": "2"])
        // And the caller's own Cookie field stays behind too, while the jar's still go with
        // a same-origin request after it.
        let own = try await get(session, "/cookies", headerFields: [.cookie: "mine=3"])
        #expect(try cookies(own) == ["mine": "3", "here": "1"])
        let ownAway = try await get(session, "/redirect-to?url=\(target)", headerFields: [.cookie: "mine=3"])
        #expect(try cookies(ownAway) == ["there": "2"])
        await session.shutdown()
    }

    /// Many requests at once share one jar: each stores its cookie, and none is lost.
    @Test func concurrentRequestsShareOneJar() async throws {
        let env = try await TestServers.shared()
        let jar = CookieJar()
        let session = SessionFactory.httpbin(env) { $0.cookieJar = jar }
        try await withThrowingTaskGroup(of: [String: String].self) { group in
            for index in 0..<16 {
                group.addTask { try cookies(try await get(session, "/cookies/set?k\(index)=\(index)")) }
            }
            for try await echoed in group { #expect(!echoed.isEmpty) }
        }
        #expect(jar.cookies.count == 16)
        let all = try cookies(try await get(session, "/cookies"))
        #expect(all == Dictionary(uniqueKeysWithValues: (0..<16).map { ("k\($0)", "\($0)") }))
        await session.shutdown()
    }

    /// A traced session runs the observed pipeline: its cookies go hop by hop as well, and
    /// each hop is a transfer span of its own.
    @Test func aTracedSessionAppliesCookiesPerHop() async throws {
        let env = try await TestServers.shared()
        let tracer = W3CInMemoryTracer()
        let jar = CookieJar()
        let session = SessionFactory.httpbin(env) {
            $0.cookieJar = jar
            $0.tracer = tracer
        }
        #expect(try cookies(try await get(session, "/cookies/set?k=v")) == ["k": "v"])
        #expect(tracer.finishedSpans.count == 3)  // the request and its two transfers
        await session.shutdown()
    }

    @Test func aSessionWithoutAJarSendsNoCookie() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        #expect(try cookies(try await get(session, "/cookies/set?k=v")) == [:])
        #expect(try cookies(try await get(session, "/cookies")) == [:])
        await session.shutdown()
    }

    @Test func theResolverPicksTheJarOfEachRequest() async throws {
        let env = try await TestServers.shared()
        let shared = CookieJar()
        let session = SessionFactory.httpbin(env) {
            $0.cookieJar = shared
            $0.cookieJarOfRequest = { _ in nil }
        }
        #expect(try cookies(try await get(session, "/cookies/set?k=v")) == [:])
        #expect(shared.cookies.isEmpty)
        await session.shutdown()
    }

    /// Over HTTPS and HTTP/2 through nginx: the jar's cookie goes on a same-origin redirect
    /// hop, not on a hop to another host.
    @Test func overHTTP2CookiesFollowSameOriginHopsOnly() async throws {
        let env = try await TestServers.shared()
        let jar = CookieJar()
        let session = SessionFactory.session(env, .https) { $0.cookieJar = jar }
        let set = try await get(
            session,
            "/httpbin/response-headers?Set-Cookie=s%3D1%3B%20Secure%3B%20Path%3D%2F"
        )
        #expect(set.metrics?.httpVersion == .http2)
        #expect(jar.cookies.map(\.name) == ["s"])
        let same = try await get(session, "/redirect/same-origin")
        #expect(same.metrics?.redirectCount == 1)
        #expect(try JSONDecoder().decode(Headers.self, from: same.data).headers["Cookie"] == "s=1")
        let cross = try await get(session, "/redirect/cross-origin")
        #expect(cross.metrics?.redirectChain.first?.host == "localhost")
        #expect(try JSONDecoder().decode(Headers.self, from: cross.data).headers["Cookie"] == nil)
        await session.shutdown()
    }

    /// The jar's cookies never reach a log line in clear: the cookie is set through a session
    /// that does not log (its value is in the URL), and a logging session sharing the jar
    /// sends it, at trace level, without any line showing it.
    @Test func aJarsCookieNeverReachesTheLog() async throws {
        let env = try await TestServers.shared()
        let jar = CookieJar()
        let setter = SessionFactory.httpbin(env) { $0.cookieJar = jar }
        let secret = "c00kie-s3cret-\(UUID().uuidString)"
        #expect(try cookies(try await get(setter, "/cookies/set?k=\(secret)")) == ["k": secret])
        await setter.shutdown()

        let capture = CapturingLogHandler()
        var logger = capture.makeLogger()
        logger.logLevel = .trace
        let session = SessionFactory.httpbin(env) {
            $0.cookieJar = jar
            $0.middlewares = [LoggingMiddleware(logger: logger, level: .trace)]
        }
        let echoed = try await session.send(HTTPRequest(method: .get, path: "/headers"), logger: logger)
        let headers = try JSONDecoder().decode(Headers.self, from: echoed.data).headers
        #expect(headers["Cookie"] == "k=\(secret)")
        // A cookie the server sets while the session logs: its Set-Cookie is redacted too.
        _ = try await session.send(HTTPRequest(method: .get, path: "/cookies/set?k=fresh"), logger: logger)
        let lines = capture.captured
        #expect(!lines.isEmpty)
        #expect(!lines.contains { $0.contains(secret) }, "\(lines)")
        #expect(!lines.contains { $0.contains("k=fresh;") }, "\(lines)")
        await session.shutdown()
    }
}
