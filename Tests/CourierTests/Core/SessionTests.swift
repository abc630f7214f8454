import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

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

    @Test func anAbsoluteURLInThePathGoesToThatURLNotUnderTheBaseURL() async throws {
        let (session, transport) = session()
        let response = try await session.send(HTTPRequest(method: .get, path: "http://Other.Example:8080/x?y=1"))
        let sent = try #require(transport.requests.first?.request)
        #expect(sent.scheme == "http")
        #expect(sent.authority == "Other.Example:8080")
        #expect(sent.path == "/x?y=1")
        // The endpoint errors and logs use is the request's own path, without the query.
        #expect(response.endpoint?.description == "GET /x")
    }

    @Test(arguments: ["ftp://host/x", "http://", "http://[::1/x", "http://user@host:99999/x"])
    func aMalformedAbsoluteURLInThePathIsRefusedAndNothingIsSent(path: String) async throws {
        let (session, transport) = session()
        await #expect(throws: CourierError(.invalidURL)) {
            _ = try await session.send(HTTPRequest(method: .get, path: path))
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func anAbsoluteURLInThePathPassesTheSameTrustChecks() async throws {
        let policy = try TrustPolicy(
            host: "api.example.com",
            pins: [try SPKIPin(sha256: [UInt8](repeating: 1, count: 32))]
        )
        let transport = MockTransport(security: try .secured(trust: [policy])) { _, _ in
            Response(head: HTTPResponse(status: .noContent))
        }
        let session = Session(
            configuration: .init(baseURL: URL(string: "https://api.example.com")!),
            transport: transport
        )
        await #expect(throws: CourierError(.untrustedHost)) {
            _ = try await session.send(HTTPRequest(method: .get, path: "https://attacker.example/steal"))
        }
        await #expect(throws: CourierError(.insecureScheme)) {
            _ = try await session.send(HTTPRequest(method: .get, path: "http://api.example.com/x"))
        }
        #expect(transport.requests.isEmpty)
        _ = try await session.send(HTTPRequest(method: .get, path: "https://api.example.com/ok"))
        #expect(transport.requests.map(\.request.path) == ["/ok"])
    }

    @Test func aTransportErrorCarriesTheEndpointWithoutTheQuery() async throws {
        let transport = MockTransport { _, _ in throw CourierError(.timedOut, message: "no answer") }
        let session = Session(
            configuration: .init(baseURL: URL(string: "https://api.example.com")!),
            transport: transport
        )
        let error = await #expect(throws: CourierError(.timedOut)) {
            _ = try await session.send(HTTPRequest(method: .post, path: "/items?token=secret"))
        }
        #expect(error?.endpoint == "POST /items")
        #expect(error?.description.contains("secret") == false)
        #expect(error?.parameters["endpoint"] == "POST /items")
    }

    @Test(arguments: ["@evil.example/x", ":8443/x", "x"])
    func aSecuredTransportRefusesAPathThatCouldMoveTheHost(path: String) async throws {
        let policy = try TrustPolicy(
            host: "api.example.com",
            pins: [try SPKIPin(sha256: [UInt8](repeating: 1, count: 32))]
        )
        let transport = MockTransport(security: try .secured(trust: [policy])) { _, _ in
            Response(head: HTTPResponse(status: .noContent))
        }
        let session = Session(transport: transport)
        let request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: path)
        await #expect(throws: CourierError(.invalidURL)) { _ = try await session.send(request) }
        #expect(transport.requests.isEmpty)
    }

    @Test func aBaseURLCourierCannotUseIsNamedInTheError() async throws {
        let (session, transport) = session("http://127.1/")
        let error = await #expect(throws: CourierError(.invalidURL)) {
            _ = try await session.send(HTTPRequest(method: .get, path: "/x"))
        }
        #expect(error?.message.contains("http://127.1/") == true)
        #expect(transport.requests.isEmpty)
    }

    @Test func reconfigureChangesLaterRequestsOnly() async throws {
        let (session, transport) = session()
        _ = try await session.send(HTTPRequest(method: .get, path: "/a"))
        await session.reconfigure { $0.defaultHeaderFields[.acceptLanguage] = "de" }
        _ = try await session.send(HTTPRequest(method: .get, path: "/b"))
        #expect(transport.requests.map { $0.request.headerFields[.acceptLanguage] } == [nil, "de"])
        #expect(session.configuration.defaultHeaderFields[.acceptLanguage] == "de")
        await session.shutdown()
        await session.reconfigure { $0.defaultHeaderFields[.acceptLanguage] = "fr" }
        await #expect(throws: CourierError(.shutDown)) {
            _ = try await session.send(HTTPRequest(method: .get, path: "/c"))
        }
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
        await #expect(throws: CourierError(.reservedHeader)) { try await session.send(request) }
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
        await #expect(throws: CourierError(.invalidURL)) {
            try await session.send(HTTPRequest(method: .get, path: "/x"))
        }
        #expect(transport.requests.isEmpty)
    }

    @Test func nonHTTPSchemesAreRefused() async throws {
        let (session, transport) = session()
        await #expect(throws: CourierError(.invalidURL)) {
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
