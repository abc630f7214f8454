import HTTPTypes
import Testing

@testable import Courier

/// The OpenTelemetry values read from a request: bounded methods, host and port without
/// brackets or user information, and a `url.full` without anything that may carry a secret.
@Suite struct ObservabilitySemanticsTests {
    @Test(arguments: [
        ("api.example.com", "https", "api.example.com", 443),
        ("api.example.com:8443", "https", "api.example.com", 8443),
        ("127.0.0.1:8080", "http", "127.0.0.1", 8080),
        ("example.com", "http", "example.com", 80),
        ("[::1]:9000", "http", "::1", 9000),
        ("[2001:db8::1]", "https", "2001:db8::1", 443),
        ("user:pw@host.example:81", "http", "host.example", 81),
        ("u@[::1]:7", "http", "::1", 7),
        ("[::1", "http", "[::1", 80),
        ("host:", "https", "host", 443),
        ("host:99999999999999999999", "https", "host", 443),
        ("bücher.example:8080", "https", "bücher.example", 8080),
    ])
    func serverAddressAndPort(authority: String, scheme: String, address: String, port: Int) {
        let semantics = HTTPClientSemantics(HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/"))
        #expect(semantics.serverAddress == address)
        #expect(semantics.serverPort == port)
    }

    @Test func unknownMethodsAreOther() throws {
        #expect(HTTPClientSemantics.methodName(.patch) == "PATCH")
        #expect(HTTPClientSemantics.methodName(try #require(.init("PURGE"))) == "_OTHER")
        #expect(HTTPClientSemantics.spanName(try #require(.init("PURGE"))) == "HTTP")
        #expect(HTTPClientSemantics.spanName(.get) == "GET")
    }

    @Test func theFullURLHasNoQueryFragmentOrUserInformation() {
        let request = HTTPRequest(
            method: .get,
            scheme: "https",
            authority: "user:secret@api.example.com:8443",
            path: "/v1/items?access_token=abc#part"
        )
        #expect(HTTPClientSemantics.fullURL(request) == "https://api.example.com:8443/v1/items")
        let ipv6 = HTTPRequest(method: .get, scheme: "http", authority: "[::1]:80", path: "/x?y")
        #expect(HTTPClientSemantics.fullURL(ipv6) == "http://[::1]:80/x")
    }

    @Test func errorTypes() {
        #expect(HTTPClientSemantics.errorType(status: 200) == nil)
        #expect(HTTPClientSemantics.errorType(status: 404) == "404")
        #expect(HTTPClientSemantics.errorType(CourierError.shutDown()) == "shutDown")
        #expect(HTTPClientSemantics.errorType(CancellationError()) == "cancelled")
    }
}
