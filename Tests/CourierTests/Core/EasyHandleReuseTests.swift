import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// One easy handle carries requests of every shape in turn: CurlTransport keeps a handle's
/// options between requests of the same kind and must not let any option of one request
/// leak into the next (httpbin echoes what reached it).
@Suite(.timeLimit(.minutes(2)))
struct EasyHandleReuseTests {
    private struct Echo: Decodable {
        var method: String
        var data: String
        var headers: [String: String]
    }

    private func echo(_ response: Response) throws -> Echo {
        try JSONDecoder().decode(Echo.self, from: response.data)
    }

    @Test func oneHandleServesEveryRequestShapeWithoutLeakingOptions() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 1, proxy: .none))
        let session = Session(configuration: .init(baseURL: env.httpbin), transport: transport)

        var first = HTTPRequest(method: .get, path: "/anything")
        first.headerFields[HTTPField.Name("X-Only-Once")!] = "1"
        #expect(try await echo(session.send(first)).headers["X-Only-Once"] == "1")

        // Same kind, other headers: the cached header list must not be reused.
        let plain = try await echo(session.send(HTTPRequest(method: .get, path: "/anything")))
        #expect(plain.method == "GET")
        #expect(plain.headers["X-Only-Once"] == nil)

        let head = try await session.send(HTTPRequest(method: .head, path: "/anything"))
        #expect(head.status == .ok)
        #expect(head.data.isEmpty)

        // After HEAD (CURLOPT_NOBODY), a GET must get its body again.
        let afterHead = try await session.send(HTTPRequest(method: .get, path: "/bytes/512"))
        #expect(afterHead.data.count == 512)

        let post = try await echo(
            session.send(HTTPRequest(method: .post, path: "/anything"), body: .data(Data("abc".utf8)))
        )
        #expect(post.method == "POST")
        #expect(post.data == "abc")

        // After a POST with a body, a GET is a GET without one.
        let afterPost = try await echo(session.send(HTTPRequest(method: .get, path: "/anything")))
        #expect(afterPost.method == "GET")
        #expect(afterPost.data.isEmpty)
        #expect(afterPost.headers["Content-Length"] == nil)

        let put = try await echo(session.send(HTTPRequest(method: .put, path: "/anything")))
        #expect(put.method == "PUT")
        #expect(put.headers["Content-Length"] == "0")

        let delete = try await echo(session.send(HTTPRequest(method: .delete, path: "/anything")))
        #expect(delete.method == "DELETE")

        let last = try await echo(session.send(HTTPRequest(method: .get, path: "/anything")))
        #expect(last.method == "GET")

        #expect(transport.statistics.easyHandles == 1)
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func aTimeoutDoesNotStayOnTheHandle() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 1, proxy: .none))
        let hurried = Session(
            configuration: .init(baseURL: env.httpbin, timeout: .milliseconds(300)),
            transport: transport
        )
        let patient = Session(configuration: .init(baseURL: env.httpbin, timeout: nil), transport: transport)

        let error = await #expect(throws: CourierError.self) {
            try await hurried.send(HTTPRequest(method: .get, path: "/delay/1"))
        }
        #expect(error?.kind == .timedOut)
        let response = try await patient.send(HTTPRequest(method: .get, path: "/delay/1"))
        #expect(response.status == .ok)
        #expect(transport.statistics.easyHandles == 1)

        await hurried.shutdown()
        await patient.shutdown()
        await transport.shutdown()
    }
}
