import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// CR, LF and NUL never reach the wire: not in the path, the authority or a header.
@Suite(.timeLimit(.minutes(1)))
struct SecurityHeaderInjectionTests {
    private func mockSession(security: SecurityConfiguration = .unpinned) -> (Session, MockTransport) {
        let mock = MockTransport(security: security) { _, _ in
            Response(head: HTTPResponse(status: .ok), body: Response.Body(Data()))
        }
        let session = Session(configuration: .init(baseURL: URL(string: "https://api.example.com")!), transport: mock)
        return (session, mock)
    }

    @Test(arguments: ["\r", "\n", "\0", "\r\nX-Injected: yes"])
    func controlCharactersInAPathNeverReachTheTransport(_ bad: String) async throws {
        let (session, mock) = mockSession()
        // A resource request's path is a caller's string: refused.
        await #expect(throws: CourierError.self) {
            try await session.send(ResourceRequest(path: "/a\(bad)b"))
        }
        #expect(mock.requests.isEmpty)
        // An HTTPRequest cannot hold them: swift-http-types turns them into spaces when the
        // request is made, and the session checks again before the middleware chain.
        _ = try await session.send(HTTPRequest(method: .get, path: "/a\(bad)b"))
        let sent = try #require(mock.requests.last?.request)
        for text in [sent.path ?? "", sent.authority ?? ""] + sent.headerFields.map(\.value) {
            #expect(!text.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
        }
    }

    // A resource request's fields are HTTPFields: swift-http-types turns CR, LF and NUL into
    // spaces when a field is made, even with a lenient value, so they cannot reach the wire.
    @Test(arguments: ["\r", "\n", "\0", "\r\nX-Injected: yes"])
    func controlCharactersInResourceRequestHeadersNeverReachTheTransport(_ bad: String) async throws {
        let (session, mock) = mockSession()
        let name = try #require(HTTPField.Name("X-Note"))
        for field in [
            HTTPField(name: name, value: "a\(bad)b"), HTTPField(name: name, lenientValue: Array("a\(bad)b".utf8)),
        ] {
            _ = try await session.send(ResourceRequest(path: "/a", headerFields: HTTPFields([field])))
            let sent = try #require(mock.requests.last?.request)
            #expect(sent.headerFields[name]?.hasPrefix("a") == true)
            #expect(sent.headerFields[HTTPField.Name("X-Injected")!] == nil)
            for value in sent.headerFields.map(\.value) {
                #expect(!value.utf8.contains { $0 == 0x0D || $0 == 0x0A || $0 == 0 })
            }
        }
    }

    // Other control characters survive a lenient value: the resource request refuses them.
    @Test(arguments: ["\u{01}", "\u{1B}", "\u{7F}"])
    func refusesControlCharactersInResourceRequestHeaders(_ bad: String) async throws {
        let (session, mock) = mockSession()
        let name = try #require(HTTPField.Name("X-Note"))
        let field = HTTPField(name: name, lenientValue: Array("a\(bad)b".utf8))
        await #expect(throws: CourierError(.invalidHeader)) {
            try await session.send(ResourceRequest(path: "/a", headerFields: HTTPFields([field])))
        }
        #expect(mock.requests.isEmpty)
    }

    @Test func neutralisesControlCharactersInHTTPFieldValues() async throws {
        // swift-http-types turns CR, LF and NUL in a field value into spaces when the field
        // is made, so no header line can be injected through HTTPFields; the real server
        // sees one field.
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.rootPin)])]
        )
        var request = HTTPRequest(method: .get, path: "/httpbin/headers")
        request.headerFields[HTTPField.Name("X-Note")!] = "a\r\nX-Injected: yes\0"
        let response = try await session.send(request)
        let headers = try SecuritySupport.echoedHeaders(response)
        #expect(headers["x-injected"] == nil)
        #expect(headers["x-note"]?.contains("X-Injected") == true)
        await SecuritySupport.close(session)
    }
}
