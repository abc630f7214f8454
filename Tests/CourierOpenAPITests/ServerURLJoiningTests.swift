#if OpenAPI
import Courier
import Foundation
import HTTPTypes
import Testing

@testable import CourierOpenAPI

/// How an operation's path and query join the generated client's server URL.
struct ServerURLJoiningTests {
    func joined(_ server: String, _ path: String) throws -> String? {
        let base = try #require(URL(string: server))
        return try HTTPRequest(method: .get, path: path).resolved(against: base).path
    }

    @Test(arguments: [
        ("https://api.example.com", "/items", "https://api.example.com/items"),
        ("https://api.example.com/v1", "/items?page=2&q=a%20b", "https://api.example.com/v1/items?page=2&q=a%20b"),
        ("http://127.0.0.1:8080/base/", "/items", "http://127.0.0.1:8080/base//items"),
        ("https://api.example.com/v1?ignored=1", "/items", "https://api.example.com/v1/items"),
        ("https://api.example.com/caf%C3%A9", "/men%C3%BC", "https://api.example.com/caf%C3%A9/men%C3%BC"),
    ])
    func appendsThePathToTheServerURLsPath(server: String, path: String, expected: String) throws {
        #expect(try joined(server, path) == expected)
    }

    @Test func aServerURLWithoutAHostIsAnInvalidURL() throws {
        #expect(throws: CourierError(.invalidURL)) { try joined("/relative", "/items") }
    }
}
#endif
