@testable import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Testing

/// Request preparation: base URL, default fields, the SDK-owned User-Agent, bad input.
@Suite(.timeLimit(.minutes(1)))
struct SessionTests {
    private func session(
        _ base: String? = "https://api.example.com/base/",
        configure: (inout Session.Configuration) -> Void = { _ in }
    ) -> (Session, MockTransport) {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .noContent)) }
        var configuration = Session.Configuration(baseURL: base.flatMap(URL.init(string:)))
        configure(&configuration)
        return (Session(configuration: configuration, transport: transport), transport)
    }

    @Test(arguments: [
        ("/items", "/base/items"),
        ("items", "/base/items"),
        ("/items?q=a%20b", "/base/items?q=a%20b"),
    ])
    func resolvesRelativePathsAgainstTheBaseURL(path: String, expected: String) async throws {
        let (session, transport) = session()
        _ = try await session.send(HTTPRequest(method: .get, path: path))
        #expect(transport.requests.first?.request.path == expected)
        #expect(transport.requests.first?.request.authority == "api.example.com")
    }

    @Test func absoluteRequestsKeepTheirOrigin() async throws {
        let (session, transport) = session()
        _ = try await session.send(HTTPRequest(method: .get, scheme: "http", authority: "127.0.0.1:9", path: "/x"))
        #expect(transport.requests.first?.request.authority == "127.0.0.1:9")
    }

    @Test func userAgentNamesAppCourierPlatformAndLibcurl() async throws {
        let (session, transport) = session { $0.applicationProduct = "App/1.2" }
        _ = try await session.send(HTTPRequest(method: .get, path: "/"))
        let agent = try #require(transport.requests.first?.request.headerFields[.userAgent])
        #expect(agent.hasPrefix("App/1.2 Courier/\(CourierLibrary.version) (Linux; "))
        #expect(agent.hasSuffix(") libcurl/\(CurlTransport.libcurlVersion)"))
        #expect(CurlTransport.libcurlVersion.split(separator: ".").count == 3)
    }

    @Test func callerSetUserAgentIsRefusedAndNothingIsSent() async throws {
        let (session, transport) = session()
        var request = HTTPRequest(method: .get, path: "/")
        request.headerFields[.userAgent] = "Mine/1.0"
        await #expect(throws: CourierError.kind(.reservedHeader)) { try await session.send(request) }
        #expect(transport.requests.isEmpty)
    }

    @Test func defaultHeaderFieldsDoNotOverrideTheRequest() async throws {
        let (session, transport) = session {
            $0.defaultHeaderFields = [.accept: "application/json", .acceptLanguage: "en"]
        }
        var request = HTTPRequest(method: .get, path: "/")
        request.headerFields[.accept] = "text/plain"
        _ = try await session.send(request)
        let fields = try #require(transport.requests.first?.request.headerFields)
        #expect(fields[.accept] == "text/plain")
        #expect(fields[.acceptLanguage] == "en")
    }

    @Test func relativeRequestWithoutBaseURLIsRefused() async throws {
        let (session, transport) = session(nil)
        await #expect(throws: CourierError.kind(.invalidURL)) {
            try await session.send(HTTPRequest(method: .get, path: "/x"))
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func nonHTTPSchemesAreRefused() async throws {
        let (session, transport) = session()
        await #expect(throws: CourierError.kind(.invalidURL)) {
            try await session.send(HTTPRequest(method: .get, scheme: "ftp", authority: "example.com", path: "/x"))
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func headerInjectionCannotReachTheWire() async throws {
        // swift-http-types never stores CR or LF in a field value; a value that tried is
        // neutralised before it reaches the transport.
        var request = HTTPRequest(method: .get, path: "/")
        request.headerFields[HTTPField.Name("X-Evil")!] = "a\r\nInjected: yes"
        let (session, transport) = session()
        _ = try await session.send(request)
        let fields = try #require(transport.requests.first?.request.headerFields)
        #expect(fields[HTTPField.Name("Injected")!] == nil)
        #expect(fields[HTTPField.Name("X-Evil")!]?.contains("\r") == false)
    }
}
