import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Every encoding and option, sent to the real httpbin and compared with what it parsed.
@Suite(.timeLimit(.minutes(1)))
struct RequestsHTTPBinTests {
    /// What httpbin's `/anything` echoes. Repeated query or form names come back as arrays.
    struct Echo: Decodable {
        let method: String
        let args: [String: ParameterValue]
        let form: [String: ParameterValue]
        let files: [String: ParameterValue]
        let headers: [String: String]
        let data: String
        let json: ParameterValue?
    }

    static let parameters: [String: ParameterValue] = [
        "a": ["b": "1 2", "c": "x"],
        "l": ["x", "y,z"],
        "s": "p+q r",
        "u": "é&=;#?/%",
    ]

    struct Row: Sendable, CustomTestStringConvertible {
        let format: ResourceRequest.QueryStringFormat
        let parsed: [String: ParameterValue]
        var testDescription: String {
            "\(format.dictionaryFormat)/\(format.arrayFormat)/\(format.spaceEncoding)/\(format.plusEncoding)"
        }
    }

    static let common: [String: ParameterValue] = ["s": "p+q r", "u": "é&=;#?/%"]

    /// How httpbin (Werkzeug) parses `parameters` in each format. A literal `+` is read as a
    /// space, as form decoding does: that is what `PlusEncoding.literal` means to such a server.
    static let table: [Row] = [
        Row(
            format: ResourceRequest.QueryStringFormat(),
            parsed: common.merging(["a[b]": "1 2", "a[c]": "x", "l[0]": "x", "l[1]": "y,z"]) { $1 }
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(dictionaryFormat: .dotNotation),
            parsed: common.merging(["a.b": "1 2", "a.c": "x", "l[0]": "x", "l[1]": "y,z"]) { $1 }
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(arrayFormat: .bracketed),
            parsed: common.merging(["a[b]": "1 2", "a[c]": "x", "l[]": ["x", "y,z"]]) { $1 }
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(arrayFormat: .commaSeparated),
            parsed: common.merging(["a[b]": "1 2", "a[c]": "x", "l": "x,y,z"]) { $1 }
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(arrayFormat: .repeatedKeys),
            parsed: common.merging(["a[b]": "1 2", "a[c]": "x", "l": ["x", "y,z"]]) { $1 }
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(spaceEncoding: .plus),
            parsed: common.merging(["a[b]": "1 2", "a[c]": "x", "l[0]": "x", "l[1]": "y,z"]) { $1 }
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(plusEncoding: .literal),
            parsed: ["a[b]": "1 2", "a[c]": "x", "l[0]": "x", "l[1]": "y,z", "s": "p q r", "u": "é&=;#?/%"]
        ),
        Row(
            format: ResourceRequest.QueryStringFormat(
                dictionaryFormat: .dotNotation,
                arrayFormat: .repeatedKeys,
                spaceEncoding: .plus,
                plusEncoding: .percentEncoded
            ),
            parsed: common.merging(["a.b": "1 2", "a.c": "x", "l": ["x", "y,z"]]) { $1 }
        ),
    ]

    private func send(_ request: ResourceRequest) async throws -> (Response, Echo) {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        do {
            let response = try await session.send(request).validate()
            await session.shutdown()
            return (response, try response.decode(Echo.self))
        } catch {
            await session.shutdown()
            throw error
        }
    }

    @Test(arguments: table)
    func queryFormatsRoundTrip(_ row: Row) async throws {
        let (_, echo) = try await send(
            ResourceRequest(path: "/anything/q", parameters: Self.parameters, queryStringFormat: row.format)
        )
        #expect(echo.method == "GET")
        #expect(echo.args == row.parsed)
    }

    @Test(arguments: table)
    func formBodiesRoundTrip(_ row: Row) async throws {
        let (_, echo) = try await send(
            ResourceRequest(
                path: "/anything/f",
                method: .post,
                parameters: Self.parameters,
                parametersEncoding: .formURLEncoded,
                queryStringFormat: row.format
            )
        )
        #expect(echo.form == row.parsed)
        #expect(echo.args.isEmpty)
        #expect(echo.headers["Content-Type"] == "application/x-www-form-urlencoded")
    }

    @Test(arguments: [HTTPRequest.Method.post, .put, .patch])
    func jsonBodiesRoundTrip(_ method: HTTPRequest.Method) async throws {
        let parameters: [String: ParameterValue] = [
            "name": "Ada \"Lovelace\" é/🙂", "n": -3, "ratio": 0.25, "ok": false, "none": nil,
            "nested": ["list": [1, "two", ["three": 3.5]], "empty": [:]],
        ]
        let (_, echo) = try await send(ResourceRequest(path: "/anything/j", method: method, parameters: parameters))
        #expect(echo.method == method.rawValue)
        #expect(echo.json == .dictionary(parameters))
        #expect(echo.headers["Content-Type"] == "application/json")
    }

    @Test(arguments: [HTTPRequest.Method.get, .delete])
    func queryMethodsSendParametersInTheQuery(_ method: HTTPRequest.Method) async throws {
        let (_, echo) = try await send(
            ResourceRequest(path: "/anything/d?keep=1", method: method, parameters: ["id": 42, "flag": true])
        )
        #expect(echo.method == method.rawValue)
        #expect(echo.args == ["keep": "1", "id": "42", "flag": "true"])
        #expect(echo.data.isEmpty)
    }

    @Test func headSendsNoBody() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let response = try await session.send(ResourceRequest(path: "/anything", method: .head, parameters: ["x": 1]))
        #expect(response.statusCode == 200 && response.data.isEmpty)
        await session.shutdown()
    }

    @Test func rawEncodableAndXMLBodies() async throws {
        let (_, text) = try await send(
            ResourceRequest(path: "/anything", method: .put, parameters: ["ignored": 1], body: .text("héllo"))
        )
        #expect(text.data == "héllo")
        #expect(text.headers["Content-Type"] == "text/plain; charset=utf-8")
        #expect(text.json == nil && text.form.isEmpty)

        struct Order: Codable, Equatable {
            let id: Int
            let items: [String]
            let note: String?
        }
        let order = Order(id: 9, items: ["tea", "<cake> & co"], note: nil)
        let (_, json) = try await send(ResourceRequest(path: "/anything", method: .post, body: try .json(order)))
        #expect(json.json == ["id": 9, "items": ["tea", "<cake> & co"]])

        let (_, xml) = try await send(
            ResourceRequest(path: "/anything", method: .post, body: try .xml(order, rootElement: "order"))
        )
        #expect(xml.headers["Content-Type"] == "application/xml; charset=utf-8")
        #expect(
            xml.data
                == #"<?xml version="1.0" encoding="UTF-8"?><order><id>9</id><items>tea</items><items>&lt;cake&gt; &amp; co</items></order>"#
        )
        let echoed = Response(head: HTTPResponse(status: .ok), body: Response.Body(Data(xml.data.utf8)))
        #expect(try echoed.decodeXML(Order.self) == order)
    }

    @Test func headersArriveAndTheUserAgentIsCouriers() async throws {
        let (_, echo) = try await send(
            ResourceRequest(
                path: "/anything",
                headerFields: [HTTPField.Name("X-Courier-Test")!: "value with spaces", .accept: "application/json"]
            )
        )
        #expect(echo.headers["X-Courier-Test"] == "value with spaces")
        #expect(echo.headers["Accept"] == "application/json")
        #expect(echo.headers["User-Agent"]?.contains("Courier/") == true)
        #expect(echo.headers["Authorization"] == nil)
    }

    /// Repeated fields are legal and `HTTPFields` carries them: both reach the server (which
    /// joins them, as RFC 9110 allows).
    @Test func repeatedHeaderFieldsAllArrive() async throws {
        var request = ResourceRequest(path: "/anything")
        request.headerFields.append(HTTPField(name: HTTPField.Name("X-Tag")!, value: "a"))
        request.headerFields.append(HTTPField(name: HTTPField.Name("x-tag")!, value: "b"))
        let (_, echo) = try await send(request)
        #expect(echo.headers["X-Tag"] == "a,b")
    }

    @Test func multipartFieldsAndFilesRoundTrip() async throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-httpbin-\(UUID().uuidString).txt"
        ).path
        let fileText = String(repeating: "streamed line\n", count: 20_000)
        try Data(fileText.utf8).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }

        var request = ResourceRequest(path: "/anything/upload")
        request.method = .post
        request.parameters = ["album": "beach day", "meta": ["year": 2024]]
        request.multipartData.append(.text("été 🙂", name: "caption"))
        request.multipartData.append(
            .data(Data("in memory".utf8), name: "memo", filename: "memo.txt", contentType: "text/plain")
        )
        request.multipartData.append(.file(atPath: path, name: "log", contentType: "text/plain"))
        let (_, echo) = try await send(request)
        #expect(echo.form == ["album": "beach day", "meta[year]": "2024", "caption": "été 🙂"])
        #expect(echo.files == ["memo": "in memory", "log": .string(fileText)])
        #expect(echo.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=courier-") == true)
        #expect(echo.json == nil)
    }

    @Test func unacceptedStatusesBecomeResourceErrorsOnlyWhenValidated() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)
        let teapot = try await session.send(ResourceRequest(path: "/status/418?secret=s3cr3t"))
        #expect(teapot.statusCode == 418 && !teapot.isSuccessful)
        #expect {
            try teapot.validate()
        } throws: { error in
            guard let error = error as? CourierError else { return false }
            return error.kind == .clientError && error.statusCode == 418
                && error.parameters["endpoint"] == "GET /status/418"
                && !error.description.contains("s3cr3t")
        }
        let unavailable = try await session.send(ResourceRequest(path: "/status/503", method: .post))
        #expect(throws: CourierError(.serverError)) { try unavailable.validate() }
        await session.shutdown()
    }

    @Test func responsesDecodeJSONXMLAndText() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env)

        struct Slideshow: Decodable {
            let title: String
            let author: String
            let slide: [Slide]
        }
        struct Slide: Decodable {
            let type: String
            let title: String
            let item: [String]?
        }
        let xml = try await session.send(ResourceRequest(path: "/xml")).validate()
        #expect(xml.contentType?.isXML == true)
        let slideshow = try xml.decodeXML(Slideshow.self)
        #expect(slideshow.title == "Sample Slide Show" && slideshow.author == "Yours Truly")
        #expect(slideshow.slide.map(\.title) == ["Wake up to WonderWidgets!", "Overview"])
        #expect(slideshow.slide[1].item?.count == 3)

        struct SlideshowJSON: Decodable {
            struct Show: Decodable { let title: String }
            let slideshow: Show
        }
        let json = try await session.send(ResourceRequest(path: "/json")).validate()
        #expect(try json.decode(SlideshowJSON.self).slideshow.title == "Sample Slide Show")

        let html = try await session.send(ResourceRequest(path: "/encoding/utf8")).validate()
        #expect(html.text?.contains("∮ E⋅da = Q") == true)
        #expect(html[header: "content-type"]?.contains("utf-8") == true)
        #expect(html.metrics != nil)
        await session.shutdown()
    }
}
