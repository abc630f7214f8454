import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite struct RequestsSessionTests {
    static func session(_ transport: MockTransport) -> Session {
        Session(configuration: .init(baseURL: URL(string: "https://api.example.com/v1")!), transport: transport)
    }

    @Test(.timeLimit(.minutes(1)))
    func sendTranslatesResolvesAndWrapsTheResponse() async throws {
        let transport = MockTransport { request, _ in
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = "application/json"
            return Response(head: head, body: Response.Body(Data(#"{"id":7}"#.utf8)))
        }
        let session = Self.session(transport)
        var request = ResourceRequest(path: "users", method: .post, parameters: ["name": "Ada"])
        request.headerFields[HTTPField.Name("X-Trace")!] = "1"
        let response = try await session.send(request)
        struct Created: Decodable { let id: Int }
        #expect(try response.validate().decode(Created.self).id == 7)
        #expect(response.endpoint?.description == "POST /users")

        let recorded = try #require(transport.requests.first)
        #expect(recorded.request.method == .post)
        #expect(recorded.request.authority == "api.example.com")
        #expect(recorded.request.path == "/v1/users")
        #expect(recorded.request.headerFields[HTTPField.Name("X-Trace")!] == "1")
        #expect(recorded.request.headerFields[.userAgent]?.contains("Courier/") == true)
        #expect(recorded.body == Data(#"{"name":"Ada"}"#.utf8))
        await session.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func badInputNeverReachesTheTransport() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .ok)) }
        let session = Self.session(transport)
        await #expect(throws: CourierError(.reservedHeader)) {
            try await session.send(ResourceRequest(path: "/x", headerFields: [.userAgent: "mine"]))
        }
        await #expect(throws: CourierError(.invalidParameter)) {
            try await session.send(ResourceRequest(path: "/x", parameters: ["n": .double(.nan)]))
        }
        #expect(throws: CourierError(.bodyNotAllowed)) {
            try session.task(for: ResourceRequest(path: "/x", body: .text("no")))
        }
        #expect(transport.requests.isEmpty)
        await session.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func errorStatusesAreResponsesUntilValidated() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .internalServerError)) }
        let session = Self.session(transport)
        let response = try await session.send(ResourceRequest(path: "/boom?secret=1"))
        #expect(response.statusCode == 500 && !response.isSuccessful)
        #expect {
            try response.validate()
        } throws: { error in
            (error as? CourierError)?.parameters == [
                "reason": "server", "code": "500", "endpoint": "GET /boom",
                "hash": StableHashProbe.hash("server|500|GET /boom"),
            ]
        }
        await session.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func tasksRunResourceRequests() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .noContent)) }
        let session = Self.session(transport)
        let task = try session.task(for: ResourceRequest(path: "/t", method: .delete, parameters: ["id": 3]))
        let response = try await task.value
        #expect(response.status == .noContent)
        #expect(transport.requests.first?.request.path == "/v1/t?id=3")
        await session.shutdown()
    }
}

extension RequestsSessionTests {
    @Test(.timeLimit(.minutes(1)))
    func repeatedHeaderFieldsAreAllSent() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .ok)) }
        let session = Self.session(transport)
        let name = HTTPField.Name("X-Tag")!
        var request = ResourceRequest(path: "/tags")
        request.headerFields.append(HTTPField(name: name, value: "a"))
        request.headerFields.append(HTTPField(name: HTTPField.Name("x-tag")!, value: "b"))
        _ = try await session.send(request).validate()
        let recorded = try #require(transport.requests.first)
        #expect(recorded.request.headerFields[values: name] == ["a", "b"])
        await session.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func aCustomMethodSendsItsParametersInTheBody() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: HTTPResponse.Status(code: 207))) }
        let session = Self.session(transport)
        let propfind = try #require(HTTPRequest.Method("PROPFIND"))
        let response = try await session.send(
            ResourceRequest(path: "/dav/docs", method: propfind, parameters: ["depth": 1])
        )
        #expect(response.statusCode == 207)
        #expect(response.endpoint?.description == "PROPFIND /dav/docs")
        let recorded = try #require(transport.requests.first)
        #expect(recorded.request.method.rawValue == "PROPFIND")
        #expect(recorded.request.path == "/v1/dav/docs")
        #expect(recorded.request.headerFields[.contentType] == "application/json")
        #expect(recorded.body == Data(#"{"depth":1}"#.utf8))
        await session.shutdown()
    }

    @Test(.timeLimit(.minutes(1)))
    func optionsSendsItsParametersInTheQuery() async throws {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .noContent)) }
        let session = Self.session(transport)
        _ = try await session.send(ResourceRequest(path: "/items", method: .options, parameters: ["id": 3]))
        let recorded = try #require(transport.requests.first)
        #expect(recorded.request.method == .options)
        #expect(recorded.request.path == "/v1/items?id=3")
        #expect(recorded.request.headerFields[.contentType] == nil)
        #expect(recorded.body == nil)
        await session.shutdown()
    }
}

/// Computes the expected hash independently of the library: FNV-1a 64.
enum StableHashProbe {
    static func hash(_ text: String) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x100_0000_01b3
        }
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
