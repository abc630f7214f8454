import Foundation
import HTTPTypes
import Logging
import Testing

@testable import Courier

/// Trailer fields are their own section, never merged into the head's fields: a response's
/// arrive with the body (the fault server's `/trailers`), and a request's go after its streamed
/// body (`/echo-trailers` reports what it received).
@Suite(.timeLimit(.minutes(1)))
struct TrailerTests {
    private static let one = HTTPField.Name("X-Trailer-One")!
    private static let checksum = HTTPField.Name("X-Checksum")!

    private func faultSession(_ env: TestEnvironment) -> Session {
        Session(configuration: .init(baseURL: env.faults), transport: CurlTransport(configuration: .init(proxy: .none)))
    }

    @Test func aBufferedResponseKeepsItsTrailersApart() async throws {
        let env = try await TestServers.shared()
        let session = faultSession(env)
        let response = try await session.send(HTTPRequest(method: .get, path: "/trailers"))
        #expect(String(decoding: response.data, as: UTF8.self) == "Response body")
        #expect(response.trailerFields[Self.one] == "first-value")
        #expect(response.trailerFields[HTTPField.Name("X-Trailer-Two")!] == "second-value")
        #expect(response.trailerFields[Self.checksum] == "abc123")
        #expect(response.trailerFields.count == 3)
        #expect(response.headerFields[Self.one] == nil)
        #expect(response.headerFields[Self.checksum] == nil)
        await session.shutdown()
    }

    @Test func aStreamedResponseHasItsTrailersOnceItsBodyEnded() async throws {
        let env = try await TestServers.shared()
        let session = faultSession(env)
        let response = try await session.stream(HTTPRequest(method: .get, path: "/trailers"))
        var body = Data()
        for try await chunk in response.body { body.append(chunk) }
        #expect(String(decoding: body, as: UTF8.self) == "Response body")
        #expect(response.trailerFields[Self.checksum] == "abc123")
        #expect(response.headerFields[Self.checksum] == nil)
        await session.shutdown()
    }

    @Test func aResponseWithoutTrailersHasAnEmptySection() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env)
        let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        #expect(response.trailerFields.isEmpty)
        await session.shutdown()
    }

    @Test func trailersAreLoggedRedactedLikeHeaderFields() async throws {
        let env = try await TestServers.shared()
        let recorder = CapturingLogHandler()
        var logger = recorder.makeLogger()
        logger.logLevel = .debug
        let session = Session(
            configuration: .init(baseURL: env.faults, middlewares: [LoggingMiddleware(logger: logger)]),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        _ = try await session.send(HTTPRequest(method: .get, path: "/trailers"))
        let lines = recorder.captured.filter { $0.contains("← trailers") }
        #expect(lines.count == 1)
        #expect(lines.first?.contains("X-Checksum: abc123") == true, "\(lines)")
        await session.shutdown()
    }

    private static func chunks(_ parts: [String]) -> AsyncStream<Data> {
        AsyncStream { continuation in
            for part in parts { continuation.yield(Data(part.utf8)) }
            continuation.finish()
        }
    }

    @Test func aStreamedRequestBodyEndsWithItsTrailers() async throws {
        let env = try await TestServers.shared()
        let session = faultSession(env)
        let body = RequestBody.stream(Self.chunks(["Hello", " World"])) {
            [
                HTTPField.Name("X-Request-Trailer-One")!: "first-trailer-value",
                HTTPField.Name("X-Request-Trailer-Two")!: "second-trailer-value",
            ]
        }
        let response = try await session.send(HTTPRequest(method: .post, path: "/echo-trailers"), body: body)
        let echo = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
        #expect(echo?["body"] as? String == "Hello World")
        let trailers = echo?["trailers"] as? [String: String]
        #expect(trailers?["x-request-trailer-one"] == "first-trailer-value")
        #expect(trailers?["x-request-trailer-two"] == "second-trailer-value")
        #expect((echo?["headers"] as? [String: String])?["transfer-encoding"] == "chunked")
        await session.shutdown()
    }

    @Test func everyRequestOnAReusedConnectionSendsItsOwnTrailers() async throws {
        let env = try await TestServers.shared()
        let session = faultSession(env)
        for round in 0..<3 {
            let body = RequestBody.stream(Self.chunks(["round \(round)"])) { [Self.checksum: "sum-\(round)"] }
            let response = try await session.send(HTTPRequest(method: .post, path: "/echo-trailers"), body: body)
            let echo = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
            #expect(echo?["body"] as? String == "round \(round)")
            #expect((echo?["trailers"] as? [String: String])?["x-checksum"] == "sum-\(round)", "round \(round)")
        }
        await session.shutdown()
    }

    @Test func aRequestWithTrailersUsesHTTP1WhereTheServerOffersHTTP2() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        // Without trailers the session speaks HTTP/2 to the server; that connection stays open.
        let plain = try await session.send(HTTPRequest(method: .post, path: "/echo"), body: .string("payload"))
        #expect(plain.metrics?.httpVersion == .http2)
        let body = RequestBody.stream(Self.chunks(["payload"])) { [Self.checksum: "abc123"] }
        let response = try await session.send(HTTPRequest(method: .post, path: "/echo"), body: body)
        #expect(response.metrics?.httpVersion == .http1_1)
        let echo = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
        #expect(echo?["length"] as? Int == 7)
        await session.shutdown()
    }

    @Test(arguments: ["Content-Length", "Authorization", "Host", "Transfer-Encoding"])
    func aFieldThatCannotBeATrailerFailsTheRequest(name: String) async throws {
        let env = try await TestServers.shared()
        let session = faultSession(env)
        let body = RequestBody.stream(Self.chunks(["payload"])) { [HTTPField.Name(name)!: "1"] }
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .post, path: "/echo-trailers?key=trailer-\(name)"), body: body)
        }
        #expect(error?.kind == .requestBodyFailed, "\(String(describing: error))")
        #expect(error?.message.contains(name) == true)
        // The server never saw a finished body, so it never answered.
        let stats = try await session.send(HTTPRequest(method: .get, path: "/admin/stats?key=trailer-\(name)"))
        let key = (try JSONSerialization.jsonObject(with: stats.data) as? [String: Any])?["key"] as? [String: Any]
        #expect(key?["answered"] as? Int == 0)
        await session.shutdown()
    }
}
