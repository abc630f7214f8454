import Courier
import Foundation
import Testing

/// Bad input is a typed error from `makeHTTPRequest()`, before anything could be sent.
@Suite struct RequestsValidationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: ResourceRequest
        let expected: RequestError
        var testDescription: String { name }
    }

    static let missingFile = "/nonexistent/courier-\(UUID().uuidString).bin"

    static let cases: [Case] = [
        Case(name: "empty path", request: ResourceRequest(path: ""), expected: .invalidPath),
        Case(name: "space in path", request: ResourceRequest(path: "/a b"), expected: .invalidPath),
        Case(name: "non-ASCII path", request: ResourceRequest(path: "/café"), expected: .invalidPath),
        Case(name: "CR LF in path", request: ResourceRequest(path: "/a\r\nHost: evil"), expected: .invalidPath),
        Case(name: "fragment", request: ResourceRequest(path: "/a#top"), expected: .invalidPath),
        Case(name: "bad percent escape", request: ResourceRequest(path: "/a%2"), expected: .invalidPath),
        Case(name: "protocol-relative", request: ResourceRequest(path: "//evil.example/a"), expected: .invalidPath),
        Case(name: "other scheme", request: ResourceRequest(path: "ftp://example.com/a"), expected: .invalidPath),
        Case(name: "file scheme", request: ResourceRequest(path: "file:///etc/passwd"), expected: .invalidPath),
        Case(
            name: "credentials in URL",
            request: ResourceRequest(path: "https://user:pw@example.com/a"),
            expected: .invalidPath
        ),
        Case(name: "empty host", request: ResourceRequest(path: "https:///a"), expected: .invalidPath),
        Case(name: "bad port", request: ResourceRequest(path: "https://example.com:99999/a"), expected: .invalidPath),
        Case(name: "no authority", request: ResourceRequest(path: "https:example.com"), expected: .invalidPath),
        Case(
            name: "NaN parameter",
            request: ResourceRequest(path: "/a", parameters: ["x": .double(.nan)]),
            expected: .invalidParameter
        ),
        Case(
            name: "NaN in JSON body",
            request: ResourceRequest(path: "/a", method: .post, parameters: ["x": [.double(.infinity)]]),
            expected: .invalidParameter
        ),
        Case(
            name: "NaN in form body",
            request: ResourceRequest(
                path: "/a",
                method: .post,
                parameters: ["x": .double(-.infinity)],
                parametersEncoding: .formURLEncoded
            ),
            expected: .invalidParameter
        ),
        Case(
            name: "empty parameter name",
            request: ResourceRequest(path: "/a", parameters: ["": 1]),
            expected: .invalidParameter
        ),
        Case(
            name: "CR LF header value",
            request: ResourceRequest(path: "/a", headers: ["X-A": "1\r\nX-Injected: 1"]),
            expected: .invalidHeader
        ),
        Case(
            name: "LF header value",
            request: ResourceRequest(path: "/a", headers: ["X-A": "1\nX-Injected: 1"]),
            expected: .invalidHeader
        ),
        Case(
            name: "NUL header value",
            request: ResourceRequest(path: "/a", headers: ["X-A": "1\u{0}"]),
            expected: .invalidHeader
        ),
        Case(
            name: "DEL header value",
            request: ResourceRequest(path: "/a", headers: ["X-A": "1\u{7F}"]),
            expected: .invalidHeader
        ),
        Case(
            name: "header name with colon",
            request: ResourceRequest(path: "/a", headers: ["X-A: b": "1"]),
            expected: .invalidHeader
        ),
        Case(
            name: "header name with space",
            request: ResourceRequest(path: "/a", headers: ["X A": "1"]),
            expected: .invalidHeader
        ),
        Case(
            name: "empty header name",
            request: ResourceRequest(path: "/a", headers: ["": "1"]),
            expected: .invalidHeader
        ),
        Case(
            name: "duplicate header",
            request: ResourceRequest(path: "/a", headers: ["X-A": "1", "x-a": "2"]),
            expected: .invalidHeader
        ),
        Case(
            name: "User-Agent",
            request: ResourceRequest(path: "/a", headers: ["User-Agent": "curl/8"]),
            expected: .reservedHeader
        ),
        Case(
            name: "user-agent lower case",
            request: ResourceRequest(path: "/a", headers: ["user-agent": "curl/8"]),
            expected: .reservedHeader
        ),
        Case(
            name: "Authorization",
            request: ResourceRequest(path: "/a", headers: ["Authorization": "Bearer x"]),
            expected: .reservedHeader
        ),
        Case(
            name: "Host",
            request: ResourceRequest(path: "/a", headers: ["HOST": "evil.example"]),
            expected: .reservedHeader
        ),
        Case(
            name: "Content-Length",
            request: ResourceRequest(path: "/a", method: .post, headers: ["Content-Length": "1"]),
            expected: .reservedHeader
        ),
        Case(
            name: "Transfer-Encoding",
            request: ResourceRequest(path: "/a", method: .post, headers: ["Transfer-Encoding": "chunked"]),
            expected: .reservedHeader
        ),
        Case(
            name: "multipart Content-Type",
            request: ResourceRequest(
                path: "/a",
                method: .post,
                multipartData: [.text("x", name: "y")],
                headers: ["Content-Type": "text/plain"]
            ),
            expected: .reservedHeader
        ),
        Case(name: "body on GET", request: ResourceRequest(path: "/a", body: .text("x")), expected: .bodyNotAllowed),
        Case(
            name: "body on HEAD",
            request: ResourceRequest(path: "/a", method: .head, body: .data(Data([1]))),
            expected: .bodyNotAllowed
        ),
        Case(
            name: "multipart on GET",
            request: ResourceRequest(path: "/a", multipartData: [.text("x", name: "y")]),
            expected: .bodyNotAllowed
        ),
        Case(
            name: "multipart on DELETE",
            request: ResourceRequest(path: "/a", method: .delete, multipartData: [.text("x", name: "y")]),
            expected: .bodyNotAllowed
        ),
        Case(
            name: "body and multipart",
            request: ResourceRequest(
                path: "/a",
                method: .post,
                body: .text("x"),
                multipartData: [.text("x", name: "y")]
            ),
            expected: .conflictingBody
        ),
        Case(
            name: "missing multipart file",
            request: ResourceRequest(path: "/a", method: .post, multipartData: [.file(atPath: missingFile, name: "f")]),
            expected: .unreadableFile
        ),
        Case(
            name: "directory as multipart file",
            request: ResourceRequest(path: "/a", method: .post, multipartData: [.file(atPath: "/tmp", name: "f")]),
            expected: .unreadableFile
        ),
        Case(
            name: "missing body file",
            request: ResourceRequest(path: "/a", method: .put, body: .file(atPath: missingFile)),
            expected: .unreadableFile
        ),
        Case(
            name: "part content type with CR LF",
            request: ResourceRequest(
                path: "/a",
                method: .post,
                multipartData: [.data(Data(), name: "f", filename: "f", contentType: "text/plain\r\nX-Injected: 1")]
            ),
            expected: .invalidHeader
        ),
        Case(
            name: "body content type with LF",
            request: ResourceRequest(path: "/a", method: .post, body: .data(Data(), contentType: "a/b\nX: 1")),
            expected: .invalidHeader
        ),
        Case(
            name: "nested array in comma format",
            request: ResourceRequest(
                path: "/a",
                parameters: ["l": [[1]]],
                queryStringFormat: ResourceRequest.QueryStringFormat(arrayFormat: .commaSeparated)
            ),
            expected: .invalidParameter
        ),
    ]

    @Test(arguments: cases)
    func badInputIsATypedError(_ testCase: Case) {
        #expect(throws: testCase.expected) { try testCase.request.makeHTTPRequest() }
    }

    @Test func theUserAgentErrorSaysWhy() {
        #expect {
            try ResourceRequest(path: "/a", headers: ["User-Agent": "x"]).makeHTTPRequest()
        } throws: { error in
            let error = error as? RequestError
            return error?.kind == .reservedHeader && error?.message.contains("User-Agent") == true
        }
    }

    @Test func encodableBodiesWithNaNAreTypedErrors() {
        struct Reading: Encodable { let value: Double }
        #expect(throws: RequestError.encodingFailed) { try ResourceBody.json(Reading(value: .nan)) }
        #expect(throws: RequestError.encodingFailed) {
            try ResourceBody.xml(Reading(value: .infinity), rootElement: "reading")
        }
        #expect(throws: RequestError.encodingFailed) {
            try ResourceBody.xml(Reading(value: 1), rootElement: "not a name")
        }
        #expect(throws: RequestError.invalidParameter) { try ParameterValue(encoding: Reading(value: .nan)) }
    }

    @Test(arguments: [
        "/a", "a", "a/b?c=d&e", "/a;b/c:d@e!$'()*+,=", "/%41%2f", "/?", "https://example.com",
        "http://127.0.0.1:8080/x?y",
        "https://[2001:db8::1]/x", "/users/j%C3%B6rg",
    ])
    func validPathsPass(_ path: String) throws {
        _ = try ResourceRequest(path: path).makeHTTPRequest()
    }
}
