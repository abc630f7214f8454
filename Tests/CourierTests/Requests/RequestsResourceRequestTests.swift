import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite struct RequestsResourceRequestTests {
    static let parts: [MultipartPart] = [.text("hello", name: "greeting")]

    @Test func mutatingAVarRequestMakesTheSameValueAsTheInitializer() {
        let direct = ResourceRequest(
            path: "/api/users",
            method: .post,
            parameters: ["name": "Ada", "tags": ["a", "b"]],
            parametersEncoding: .formURLEncoded,
            queryStringFormat: ResourceRequest.QueryStringFormat(arrayFormat: .bracketed),
            headerFields: [HTTPField.Name("X-Flags")!: "1000010"]
        )
        var request = ResourceRequest(path: "/api/users")
        #expect(request != direct)
        request.method = .post
        request.parameters["name"] = "Ada"
        request.parameters["tags"] = ["a", "b"]
        request.parametersEncoding = .formURLEncoded
        request.queryStringFormat.arrayFormat = .bracketed
        request.headerFields[HTTPField.Name("X-Flags")!] = "1000010"
        #expect(request == direct)
        #expect(Set([request, direct]).count == 1)
    }

    @Test func aRequestIsAValue() {
        let base = ResourceRequest(path: "/a")
        var post = base
        post.method = .post
        #expect(base.method == .get)
        #expect(post.method == .post)
        var withParts = post
        withParts.multipartData.append(Self.parts[0])
        withParts.multipartData.append(.data(Data([1]), name: "f", filename: "f.bin"))
        #expect(withParts.multipartData.count == 2)
        #expect(post.multipartData.isEmpty)
        var withBody = base
        withBody.body = .text("x")
        #expect(withBody.body == .text("x"))
        #expect(base.body == nil)
    }

    @Test func getParametersGoInTheQuery() throws {
        let (request, body) = try ResourceRequest(path: "/search?lang=en", parameters: ["q": "a b", "page": 2])
            .makeHTTPRequest()
        #expect(request.method == .get)
        #expect(request.scheme == nil && request.authority == nil)
        #expect(request.path == "/search?lang=en&page=2&q=a%20b")
        #expect(body == nil)
        #expect(request.headerFields[.contentType] == nil)
    }

    @Test(arguments: [HTTPRequest.Method.get, .head, .delete, .options, .trace])
    func queryMethodsNeverPutParametersInTheBody(_ method: HTTPRequest.Method) throws {
        let (request, body) = try ResourceRequest(path: "items", method: method, parameters: ["id": 7])
            .makeHTTPRequest()
        #expect(request.method == method)
        #expect(request.path == "items?id=7")
        #expect(body == nil)
        #expect(request.headerFields[.contentType] == nil)
    }

    @Test func optionsSendsItsParametersInTheQuery() throws {
        let (request, body) = try ResourceRequest(
            path: "/api/users?lang=en",
            method: .options,
            parameters: ["fields": ["id", "name"]],
            queryStringFormat: ResourceRequest.QueryStringFormat(arrayFormat: .commaSeparated)
        )
        .makeHTTPRequest()
        #expect(request.method == .options)
        #expect(request.method.rawValue == "OPTIONS")
        #expect(request.path == "/api/users?lang=en&fields=id,name")
        #expect(body == nil)
        #expect(request.headerFields[.contentType] == nil)
    }

    @Test func aCustomMethodSendsItsParametersInTheBody() async throws {
        let propfind = try #require(HTTPRequest.Method("PROPFIND"))
        let (request, body) = try ResourceRequest(
            path: "/dav/docs?depth=1",
            method: propfind,
            parameters: ["prop": "getetag", "n": 2]
        )
        .makeHTTPRequest()
        #expect(request.method == propfind)
        #expect(request.method.rawValue == "PROPFIND")
        #expect(request.path == "/dav/docs?depth=1")
        #expect(request.headerFields[.contentType] == "application/json")
        let data = try #require(try await body?.collect(upTo: 1 << 20))
        #expect(String(decoding: data, as: UTF8.self) == #"{"n":2,"prop":"getetag"}"#)

        var form = ResourceRequest(path: "/dav/docs", method: propfind, parameters: ["prop": "a b"])
        form.parametersEncoding = .formURLEncoded
        let (formRequest, formBody) = try form.makeHTTPRequest()
        #expect(formRequest.path == "/dav/docs")
        #expect(formRequest.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(try await formBody?.collect(upTo: 100) == Data("prop=a%20b".utf8))
    }

    @Test func postParametersAreJSONByDefault() async throws {
        let (request, body) = try ResourceRequest(
            path: "/users",
            method: .post,
            parameters: ["name": "Ada", "n": 1, "ok": true, "z": nil]
        )
        .makeHTTPRequest()
        #expect(request.path == "/users")
        #expect(request.headerFields[.contentType] == "application/json")
        let data = try #require(try await body?.collect(upTo: 1 << 20))
        #expect(String(decoding: data, as: UTF8.self) == #"{"n":1,"name":"Ada","ok":true,"z":null}"#)
        #expect(body?.length == Int64(data.count))
    }

    @Test(arguments: [HTTPRequest.Method.post, .put, .patch])
    func formEncodingUsesTheQueryFormat(_ method: HTTPRequest.Method) async throws {
        let resource = ResourceRequest(
            path: "/users",
            method: method,
            parameters: ["a": ["b": "x y"], "l": [1, 2]],
            parametersEncoding: .formURLEncoded,
            queryStringFormat: ResourceRequest.QueryStringFormat(arrayFormat: .repeatedKeys, spaceEncoding: .plus)
        )
        let (request, body) = try resource.makeHTTPRequest()
        #expect(request.method == method)
        #expect(request.headerFields[.contentType] == "application/x-www-form-urlencoded")
        let data = try #require(try await body?.collect(upTo: 1 << 20))
        #expect(String(decoding: data, as: UTF8.self) == "a%5Bb%5D=x+y&l=1&l=2")
    }

    @Test func aRawBodyReplacesParameters() async throws {
        let resource = ResourceRequest(path: "/raw", method: .put, parameters: ["ignored": 1], body: .text("hello"))
        let (request, body) = try resource.makeHTTPRequest()
        #expect(request.path == "/raw")
        #expect(request.headerFields[.contentType] == "text/plain; charset=utf-8")
        #expect(try await body?.collect(upTo: 100) == Data("hello".utf8))
    }

    @Test func deleteKeepsParametersInTheQueryNextToARawBody() async throws {
        let (request, body) = try ResourceRequest(
            path: "/items",
            method: .delete,
            parameters: ["force": true],
            body: .data(Data([1, 2]))
        )
        .makeHTTPRequest()
        #expect(request.path == "/items?force=true")
        #expect(request.headerFields[.contentType] == nil)
        #expect(try await body?.collect(upTo: 100) == Data([1, 2]))
    }

    @Test func callerContentTypeWinsOverTheBodys() throws {
        let resource = ResourceRequest(
            path: "/x",
            method: .post,
            parameters: ["a": 1],
            headerFields: [HTTPField.Name("content-type")!: "application/vnd.api+json"]
        )
        #expect(try resource.makeHTTPRequest().request.headerFields[.contentType] == "application/vnd.api+json")
    }

    @Test func headerFieldsKeepTheirOrderAndAreTrimmed() throws {
        var fields = HTTPFields()
        fields.append(HTTPField(name: HTTPField.Name("X-B")!, value: " 2 "))
        fields.append(HTTPField(name: HTTPField.Name("x-a")!, lenientValue: Array("1\t".utf8)))
        fields.append(HTTPField(name: .accept, value: "application/json"))
        let (request, _) = try ResourceRequest(path: "/x", headerFields: fields).makeHTTPRequest()
        #expect(request.headerFields.map(\.name.rawName) == ["X-B", "x-a", "Accept"])
        #expect(request.headerFields.map(\.value) == ["2", "1", "application/json"])
    }

    @Test func absoluteURLsAreSplit() throws {
        let (request, _) = try ResourceRequest(path: "HTTPS://api.example.com:8443?x=1", parameters: ["y": 2])
            .makeHTTPRequest()
        #expect(request.scheme == "https")
        #expect(request.authority == "api.example.com:8443")
        #expect(request.path == "/?x=1&y=2")
        let (ipv6, _) = try ResourceRequest(path: "http://[::1]:8080/a/b%20c").makeHTTPRequest()
        #expect(ipv6.authority == "[::1]:8080")
        #expect(ipv6.path == "/a/b%20c")
    }

    @Test func anEncodableBodyUsesTheGivenEncoder() async throws {
        struct Person: Encodable { let firstName: String }
        let encoder = JSONEncoder()
        encoder.keyEncodingStrategy = .convertToSnakeCase
        let (request, body) = try ResourceRequest(
            path: "/p",
            method: .post,
            body: try .json(Person(firstName: "Ada"), encoder: encoder)
        )
        .makeHTTPRequest()
        #expect(request.headerFields[.contentType] == "application/json")
        #expect(try await body?.collect(upTo: 100) == Data(#"{"first_name":"Ada"}"#.utf8))
    }

    @Test func parameterValuesComeFromEncodableModels() throws {
        struct Query: Encodable {
            let term: String
            let limit: Int
            let filters: [String]
        }
        let value = try ParameterValue(encoding: Query(term: "cats", limit: 5, filters: ["a"]))
        #expect(value == ["term": "cats", "limit": 5, "filters": ["a"]])
        #expect(try ResourceRequest.QueryStringFormat().encode(value.members) == "filters%5B0%5D=a&limit=5&term=cats")
    }

    @Test func aFileBodyStreamsFromDisk() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-requests-\(UUID().uuidString)"
        ).path
        try Data("file body".utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let (request, body) = try ResourceRequest(path: "/upload", method: .put, body: .file(atPath: path))
            .makeHTTPRequest()
        #expect(request.headerFields[.contentType] == "application/octet-stream")
        #expect(body?.length == 9)
        #expect(try await body?.collect(upTo: 100) == Data("file body".utf8))
    }
}
