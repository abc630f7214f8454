import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

@Suite struct RequestsSessionTests {
    static func session(_ transport: MockTransport) -> Session {
        Session(configuration: .init(baseURL: URL(string: "https://api.example.com/v1")!), transport: transport)
    }

    @Test(.timeLimit(.minutes(1)))
    func sendTranslatesResolvesAndWrapsTheResponse() async throws {
        let transport = MockTransport { request, _ in
            var head = HTTPResponse(status: .ok)
            head.headerFields[.contentType] = "application/json"
            return Response(head: head, body: ResponseBody(Data(#"{"id":7}"#.utf8)))
        }
        let session = Self.session(transport)
        let response = try await session.send(
            ResourceRequest(path: "users", method: .post, parameters: ["name": "Ada"], headers: ["X-Trace": "1"])
        )
        struct Created: Decodable { let id: Int }
        #expect(try response.validate().decode(Created.self).id == 7)
        #expect(response.endpoint.description == "POST /users")

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
        await #expect(throws: RequestError.reservedHeader) {
            try await session.send(ResourceRequest(path: "/x", headers: ["User-Agent": "mine"]))
        }
        await #expect(throws: RequestError.invalidParameter) {
            try await session.send(ResourceRequest(path: "/x", parameters: ["n": .double(.nan)]))
        }
        #expect(throws: RequestError.bodyNotAllowed) {
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
            (error as? ResourceError)?.parameters == [
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
