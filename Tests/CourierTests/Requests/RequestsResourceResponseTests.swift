import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite struct RequestsResourceResponseTests {
    static let endpoint = ResponseEndpoint(method: .get, target: "/r")

    static func response(_ data: Data, contentType: String?, status: HTTPResponse.Status = .ok) -> Response {
        var headers = HTTPFields()
        if let contentType { headers[.contentType] = contentType }
        var response = Response(head: HTTPResponse(status: status, headerFields: headers), body: Response.Body(data))
        response.endpoint = endpoint
        return response
    }

    @Test(arguments: [
        ("text/plain; charset=ISO-8859-1", Data([0x63, 0x61, 0x66, 0xE9]), "café"),
        ("text/plain; charset=\"latin1\"", Data([0xE9]), "é"),
        ("text/html;charset=windows-1252", Data([0x80]), "€"),
        ("text/plain; charset=utf-16be", Data([0x00, 0x68, 0x00, 0xE9]), "hé"),
        ("text/plain; charset=UTF-16LE", Data([0x68, 0x00, 0xE9, 0x00]), "hé"),
        ("application/json", Data("{\"a\":\"é\"}".utf8), "{\"a\":\"é\"}"),
        ("text/plain; charset=utf-8", Data([0xEF, 0xBB, 0xBF, 0x68]), "h"),
        ("text/plain; charset=x-unknown", Data("ok".utf8), "ok"),
        ("text/plain; format=flowed; charset=us-ascii", Data("plain".utf8), "plain"),
    ])
    func textUsesTheCharsetFromContentType(_ contentType: String, data: Data, expected: String) {
        #expect(Self.response(data, contentType: contentType).text == expected)
    }

    @Test func textWithoutContentTypeIsUTF8AndInvalidBytesGiveNil() {
        #expect(Self.response(Data("héllo".utf8), contentType: nil).text == "héllo")
        #expect(Self.response(Data([0xFF, 0xFE, 0xFD]), contentType: "text/plain; charset=utf-8").text == nil)
    }

    @Test func mediaTypesParseQuotedParameters() throws {
        let type = try #require(MediaType(parsing: #"Application/Problem+JSON; Charset="UTF-8"; title="a;b\"c""#))
        #expect(type.description == "application/problem+json")
        #expect(type.charset == "utf-8")
        #expect(type.parameters["title"] == #"a;b"c"#)
        #expect(type.isJSON && !type.isXML)
        #expect(MediaType(parsing: "text/xml")?.isXML == true)
        #expect(MediaType(parsing: "nonsense") == nil)
    }

    @Test func headersAreCaseInsensitive() {
        var headers = HTTPFields()
        headers[HTTPField.Name("X-Request-ID")!] = "abc"
        headers.append(HTTPField(name: HTTPField.Name("Vary")!, value: "Accept"))
        headers.append(HTTPField(name: HTTPField.Name("vary")!, value: "Origin"))
        let response = Response(head: HTTPResponse(status: .ok, headerFields: headers))
        #expect(response[header: "x-request-id"] == "abc")
        #expect(response[header: "X-REQUEST-ID"] == "abc")
        #expect(response.headerFields[HTTPField.Name("x-request-id")!] == "abc")
        #expect(response.headerFields[values: HTTPField.Name("VARY")!] == ["Accept", "Origin"])
        #expect(response[header: "VARY"] == "Accept, Origin")
        #expect(response[header: "bad name"] == nil)
        #expect(response[header: "missing"] == nil)
    }

    @Test func decodeReadsJSONWithTheGivenDecoder() throws {
        struct User: Decodable, Equatable { let firstName: String }
        let response = Self.response(Data(#"{"first_name":"Ada"}"#.utf8), contentType: "application/json")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        #expect(try response.decode(User.self, decoder: decoder) == User(firstName: "Ada"))
    }

    @Test func aBodyThatDoesNotDecodeIsAResourceErrorWithTheStatus() {
        struct User: Decodable { let name: String }
        let response = Self.response(Data("not json".utf8), contentType: "application/json", status: .accepted)
        #expect {
            try response.decode(User.self)
        } throws: { error in
            guard let error = error as? CourierError else { return false }
            return error.kind == .undecodableBody && error.statusCode == 202 && error.endpoint == "GET /r"
                && error.parameters["reason"] == "decoding" && error.response?.data == Data("not json".utf8)
        }
        #expect(throws: CourierError(.undecodableBody)) { try response.decodeXML(User.self) }
    }

    @Test func decodeWorksOnErrorStatusesWhenAsked() throws {
        struct Problem: Decodable { let title: String }
        let response = Self.response(
            Data(#"{"title":"Not here"}"#.utf8),
            contentType: "application/problem+json",
            status: .notFound
        )
        #expect(!response.isSuccessful)
        #expect(try response.decode(Problem.self).title == "Not here")
        #expect(throws: CourierError(.clientError)) { try response.validate().decode(Problem.self) }
    }

    @Test func aHandMadeResponseHasEveryView() {
        let metrics = Response.Metrics(total: .milliseconds(5), bytesReceived: 2)
        var head = HTTPResponse(status: .created)
        head.headerFields[.contentType] = "text/plain"
        let response = Response(head: head, body: Response.Body(Data("ok".utf8)), metrics: metrics)
        #expect(response.statusCode == 201 && response.isSuccessful)
        #expect(response.text == "ok")
        #expect(response.metrics == metrics)
        #expect(response.contentType?.description == "text/plain")
        #expect(response.data == Data("ok".utf8) && !response.body.isStreamed)
    }
}
