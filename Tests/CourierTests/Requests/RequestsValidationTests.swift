import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Bad input is a typed error from `makeHTTPRequest()`, before anything could be sent.
@Suite struct RequestsValidationTests {
    struct Case: Sendable, CustomTestStringConvertible {
        let name: String
        let request: ResourceRequest
        let expected: CourierError.Kind
        var testDescription: String { name }
    }

    static let missingFile = "/nonexistent/courier-\(UUID().uuidString).bin"

    static let cases: [Case] = [
        Case(name: "empty path", request: ResourceRequest(path: ""), expected: .invalidURL),
        Case(name: "space in path", request: ResourceRequest(path: "/a b"), expected: .invalidURL),
        Case(name: "non-ASCII path", request: ResourceRequest(path: "/café"), expected: .invalidURL),
        Case(name: "CR LF in path", request: ResourceRequest(path: "/a\r\nHost: evil"), expected: .invalidURL),
        Case(name: "fragment", request: ResourceRequest(path: "/a#top"), expected: .invalidURL),
        Case(name: "bad percent escape", request: ResourceRequest(path: "/a%2"), expected: .invalidURL),
        Case(name: "protocol-relative", request: ResourceRequest(path: "//evil.example/a"), expected: .invalidURL),
        Case(name: "other scheme", request: ResourceRequest(path: "ftp://example.com/a"), expected: .invalidURL),
        Case(name: "file scheme", request: ResourceRequest(path: "file:///etc/passwd"), expected: .invalidURL),
        Case(
            name: "credentials in URL",
            request: ResourceRequest(path: "https://user:pw@example.com/a"),
            expected: .invalidURL
        ),
        Case(name: "empty host", request: ResourceRequest(path: "https:///a"), expected: .invalidURL),
        Case(name: "bad port", request: ResourceRequest(path: "https://example.com:99999/a"), expected: .invalidURL),
        Case(name: "no authority", request: ResourceRequest(path: "https:example.com"), expected: .invalidURL),
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
            name: "DEL header value",
            request: ResourceRequest(path: "/a", headerFields: fields(lenient: "X-A", "1\u{7F}")),
            expected: .invalidHeader
        ),
        Case(
            name: "control character in header value",
            request: ResourceRequest(path: "/a", headerFields: fields(lenient: "X-A", "1\u{1B}[2J")),
            expected: .invalidHeader
        ),
        Case(
            name: "User-Agent",
            request: ResourceRequest(path: "/a", headerFields: [.userAgent: "curl/8"]),
            expected: .reservedHeader
        ),
        Case(
            name: "user-agent lower case",
            request: ResourceRequest(path: "/a", headerFields: [HTTPField.Name("user-agent")!: "curl/8"]),
            expected: .reservedHeader
        ),
        Case(
            name: "Authorization",
            request: ResourceRequest(path: "/a", headerFields: [.authorization: "Bearer x"]),
            expected: .reservedHeader
        ),
        Case(
            name: "Host",
            request: ResourceRequest(path: "/a", headerFields: [HTTPField.Name("HOST")!: "evil.example"]),
            expected: .reservedHeader
        ),
        Case(
            name: "Content-Length",
            request: ResourceRequest(path: "/a", method: .post, headerFields: [.contentLength: "1"]),
            expected: .reservedHeader
        ),
        Case(
            name: "Transfer-Encoding",
            request: ResourceRequest(path: "/a", method: .post, headerFields: [.transferEncoding: "chunked"]),
            expected: .reservedHeader
        ),
        Case(
            name: "reserved name after an allowed one",
            request: ResourceRequest(
                path: "/a",
                headerFields: [HTTPField.Name("X-A")!: "1", HTTPField.Name("Authorization")!: "Basic eA=="]
            ),
            expected: .reservedHeader
        ),
        Case(
            name: "multipart Content-Type",
            request: ResourceRequest(
                path: "/a",
                method: .post,
                multipartData: [.text("x", name: "y")],
                headerFields: [.contentType: "text/plain"]
            ),
            expected: .reservedHeader
        ),
        Case(
            name: "body on TRACE",
            request: ResourceRequest(path: "/a", method: .trace, body: .text("x")),
            expected: .bodyNotAllowed
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
            name: "body content type with NUL",
            request: ResourceRequest(path: "/a", method: .post, body: .data(Data(), contentType: "a/b\u{0}")),
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

    /// A header field whose value skips swift-http-types' legalization (control characters other
    /// than CR, LF and NUL survive `HTTPField(name:lenientValue:)`).
    static func fields(lenient name: String, _ value: String) -> HTTPFields {
        HTTPFields([HTTPField(name: HTTPField.Name(name)!, lenientValue: Array(value.utf8))])
    }

    @Test(arguments: cases)
    func badInputIsATypedError(_ testCase: Case) {
        #expect(throws: CourierError(testCase.expected)) { try testCase.request.makeHTTPRequest() }
    }

    /// Header names that are not RFC 9110 tokens cannot be made any more: `HTTPField.Name`
    /// refuses them, so a request can never carry one.
    @Test(arguments: ["X-A: b", "X A", "", "X-A\r\nX-Injected", "caf\u{E9}", "X\u{0}"])
    func invalidHeaderNamesCannotBeBuilt(_ name: String) {
        #expect(HTTPField.Name(name) == nil)
    }

    /// CR, LF and NUL cannot reach a header value either: `HTTPField` turns them into spaces,
    /// so nothing can be injected, and what is sent is one field on one line.
    @Test(arguments: ["1\r\nX-Injected: 1", "1\nX-Injected: 1", "1\rX-Injected: 1", "1\u{0}X-Injected: 1"])
    func crLFAndNULInAHeaderValueNeverInjectAField(_ value: String) throws {
        let name = HTTPField.Name("X-A")!
        let (request, _) = try ResourceRequest(path: "/a", headerFields: [name: value]).makeHTTPRequest()
        #expect(request.headerFields[HTTPField.Name("X-Injected")!] == nil)
        #expect(request.headerFields[fields: name].count == 1)
        let sent = try #require(request.headerFields[name])
        let controlBytes: Set<UInt8> = [0x0D, 0x0A, 0x00]
        #expect(sent.utf8.allSatisfy { !controlBytes.contains($0) })
        #expect(sent.hasPrefix("1") && sent.hasSuffix("X-Injected: 1"))
    }

    /// Repeated fields are legal HTTP, and `HTTPFields` carries them: both are sent, in order.
    @Test func repeatedHeaderNamesAreAllSent() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: HTTPField.Name("X-A")!, value: "1"))
        fields.append(HTTPField(name: HTTPField.Name("x-a")!, value: "2"))
        let (request, _) = try ResourceRequest(path: "/a", headerFields: fields).makeHTTPRequest()
        #expect(request.headerFields[values: HTTPField.Name("X-A")!] == ["1", "2"])
        #expect(request.headerFields[HTTPField.Name("x-a")!] == "1, 2")
    }

    @Test func theUserAgentErrorSaysWhy() {
        #expect {
            try ResourceRequest(path: "/a", headerFields: [.userAgent: "x"]).makeHTTPRequest()
        } throws: { error in
            let error = error as? CourierError
            return error?.kind == .reservedHeader && error?.message.contains("User-Agent") == true
        }
    }

    @Test func encodableBodiesWithNaNAreTypedErrors() {
        struct Reading: Encodable { let value: Double }
        #expect(throws: CourierError(.encodingFailed)) { try ResourceRequest.Body.json(Reading(value: .nan)) }
        #expect(throws: CourierError(.encodingFailed)) {
            try ResourceRequest.Body.xml(Reading(value: .infinity), rootElement: "reading")
        }
        #expect(throws: CourierError(.encodingFailed)) {
            try ResourceRequest.Body.xml(Reading(value: 1), rootElement: "not a name")
        }
        #expect(throws: CourierError(.invalidParameter)) { try ParameterValue(encoding: Reading(value: .nan)) }
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
