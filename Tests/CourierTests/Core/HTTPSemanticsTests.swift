import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// HTTP semantics against the real httpbin.
@Suite(.timeLimit(.minutes(1)))
struct HTTPSemanticsTests {
    private func json(_ response: Response) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
    }

    @Test(arguments: [HTTPRequest.Method.get, .post, .put, .patch, .delete])
    func sendsEveryMethod(method: HTTPRequest.Method) async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let body: RequestBody? = method == .get ? nil : .string("payload-\(method.rawValue)")
        let response = try await session.send(HTTPRequest(method: method, path: "/anything/m"), body: body)
        let echo = try json(response)
        #expect(echo["method"] as? String == method.rawValue)
        if method != .get { #expect(echo["data"] as? String == "payload-\(method.rawValue)") }
        await session.shutdown()
    }

    @Test func anAbsoluteURLInThePathReachesThatServerNotTheBaseURL() async throws {
        let env = try await TestServers.shared()
        // The session's base URL is nginx; the request names httpbin itself.
        let session = SessionFactory.session(env, .http)
        let absolute = env.httpbin.absoluteString.trimmingSuffix("/") + "/anything/absolute?x=1"
        let response = try await session.send(HTTPRequest(method: .get, path: absolute))
        let echo = try json(response)
        #expect((echo["url"] as? String)?.hasSuffix("/anything/absolute?x=1") == true)
        #expect((echo["args"] as? [String: String])?["x"] == "1")
        await session.shutdown()
    }

    @Test func headRequestHasNoBody() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let response = try await session.send(HTTPRequest(method: .head, path: "/bytes/2048"))
        #expect(response.status == .ok)
        #expect(response.data.isEmpty)
        #expect(response.headerFields[.contentLength] == "2048")
        await session.shutdown()
    }

    @Test func sendsHeadersAndQuery() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env) { $0.defaultHeaderFields = [HTTPField.Name("X-Default")!: "d"] }
        var request = HTTPRequest(method: .get, path: "/anything?a=1&b=two%20words&a=3")
        request.headerFields[HTTPField.Name("X-Custom")!] = "value with spaces"
        request.headerFields[HTTPField.Name("X-Empty")!] = ""
        let echo = try json(try await session.send(request))
        let headers = try #require(echo["headers"] as? [String: String])
        #expect(headers["X-Custom"] == "value with spaces")
        #expect(headers["X-Default"] == "d")
        #expect(headers["X-Empty"] == "")
        #expect(headers["User-Agent"]?.contains("Courier/") == true)
        let args = try #require(echo["args"] as? [String: Any])
        #expect(args["a"] as? [String] == ["1", "3"])
        #expect(args["b"] as? String == "two words")
        await session.shutdown()
    }

    @Test func responseHeadersAreCaseInsensitive() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let response = try await session.send(HTTPRequest(method: .get, path: "/response-headers?X-Mixed-Case=yes"))
        #expect(response.headerFields[HTTPField.Name("x-mixed-case")!] == "yes")
        #expect(response.headerFields[HTTPField.Name("X-MIXED-CASE")!] == "yes")
        await session.shutdown()
    }

    @Test func followsRedirects() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let response = try await session.send(HTTPRequest(method: .get, path: "/redirect/3"))
        #expect(response.status == .ok)
        #expect(response.metrics?.redirectCount == 3)
        #expect(try json(response)["url"] as? String == "\(env.httpbin.absoluteString)/get")
        await session.shutdown()
    }

    @Test func tooManyRedirectsIsATypedError() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env) { $0.maximumRedirects = 2 }
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/redirect/5"))
        }
        #expect(error?.kind == .tooManyRedirects)
        await session.shutdown()
    }

    @Test func redirectsCanBeReturnedInsteadOfFollowed() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env) { $0.maximumRedirects = 0 }
        let response = try await session.send(HTTPRequest(method: .get, path: "/redirect-to?url=/get&status_code=307"))
        #expect(response.status.code == 307)
        #expect(response.headerFields[.location] == "/get")
        await session.shutdown()
    }

    @Test func httpsNeverRedirectsToHTTP() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/redirect/to-http"))
        }
        #expect(error?.kind == .insecureRedirect)
        await session.shutdown()
    }

    @Test(arguments: ["gzip", "brotli", "deflate"])
    func decodesCompressedBodies(encoding: String) async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let response = try await session.send(HTTPRequest(method: .get, path: "/\(encoding)"))
        #expect(response.status == .ok)
        let echo = try json(response)
        #expect(echo[encoding == "brotli" ? "brotli" : encoding == "gzip" ? "gzipped" : "deflated"] as? Bool == true)
        await session.shutdown()
    }

    @Test(arguments: [200, 201, 204, 304, 400, 401, 404, 418, 500, 503])
    func everyStatusIsAResponse(code: Int) async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let response = try await session.send(HTTPRequest(method: .get, path: "/status/\(code)"))
        #expect(response.status.code == code)
        #expect(response.isSuccessful == (200...299).contains(code))
        await session.shutdown()
    }

    @Test func delayedResponseArrivesAndTimeoutCutsItShort() async throws {
        let env = try await TestServers.shared()
        let patient = SessionFactory.httpbin(env)
        let slow = try await patient.send(HTTPRequest(method: .get, path: "/delay/1"))
        #expect(slow.status == .ok)
        #expect(slow.metrics.map { $0.timeToFirstByte >= .milliseconds(900) } == true)
        let hasty = SessionFactory.httpbin(env) { $0.timeout = .milliseconds(300) }
        await #expect(throws: CourierError(.timedOut)) {
            try await hasty.send(HTTPRequest(method: .get, path: "/delay/3"))
        }
        await patient.shutdown()
        await hasty.shutdown()
    }

    @Test func streamsChunkedBytes() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let response = try await session.stream(
            HTTPRequest(method: .get, path: "/stream-bytes/100000?seed=7&chunk_size=1000")
        )
        #expect(response.headerFields[.transferEncoding] == "chunked")
        var total = 0
        for try await chunk in response.body { total += chunk.count }
        #expect(total == 100_000)
        let buffered = try await session.send(
            HTTPRequest(method: .get, path: "/stream-bytes/100000?seed=7&chunk_size=1000")
        )
        #expect(buffered.data.count == 100_000)
        await session.shutdown()
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
