import Foundation
import HTTPTypes
import Testing

@testable import Courier

@Suite struct RequestsXMLCodingTests {
    struct Book: Codable, Equatable {
        var title: String
        var pages: Int
        var price: Double
        var available: Bool
        var tags: [String]
        var subtitle: String?
        var author: Author
        var chapters: [Chapter]
    }

    struct Author: Codable, Equatable {
        var name: String
        var born: Int?
    }

    struct Chapter: Codable, Equatable {
        var number: UInt8
        var title: String
    }

    static let book = Book(
        title: "Fish & <Chips> \"quoted\"\r\nline",
        pages: 320,
        price: 12.5,
        available: true,
        tags: ["cooking", "", "fish"],
        subtitle: nil,
        author: Author(name: "Ada", born: 1815),
        chapters: [Chapter(number: 1, title: "Start"), Chapter(number: 2, title: "End")]
    )

    @Test func encodingWritesTheDocumentedMapping() throws {
        let data = try XMLTreeEncoder().encode(Self.book, rootElement: "book")
        let expected =
            #"<?xml version="1.0" encoding="UTF-8"?>"#
            + "<book><title>Fish &amp; &lt;Chips&gt; \"quoted\"&#13;\nline</title><pages>320</pages><price>12.5</price>"
            + "<available>true</available><tags>cooking</tags><tags/><tags>fish</tags>"
            + "<author><name>Ada</name><born>1815</born></author>"
            + "<chapters><number>1</number><title>Start</title></chapters><chapters><number>2</number><title>End</title></chapters></book>"
        #expect(String(decoding: data, as: UTF8.self) == expected)
    }

    @Test func whatIsEncodedDecodesBack() throws {
        let data = try XMLTreeEncoder().encode(Self.book, rootElement: "book")
        #expect(try XMLTreeDecoder().decode(Book.self, from: data) == Self.book)
        let array = [Author(name: "A", born: nil), Author(name: "B", born: 2)]
        #expect(
            try XMLTreeDecoder().decode([Author].self, from: XMLTreeEncoder().encode(array, rootElement: "authors"))
                == array
        )
        let dates = [Date(timeIntervalSinceReferenceDate: 12.25)]
        #expect(
            try XMLTreeDecoder().decode([Date].self, from: XMLTreeEncoder().encode(dates, rootElement: "d")) == dates
        )
        struct Matrix: Codable, Equatable {
            var rows: [[Int]]
            var empty: [String]
            var optional: [Int]?
        }
        let matrix = Matrix(rows: [[1, 2], [], [3]], empty: [], optional: [4])
        let matrixData = try XMLTreeEncoder().encode(matrix, rootElement: "m")
        #expect(
            String(decoding: matrixData, as: UTF8.self)
                == #"<?xml version="1.0" encoding="UTF-8"?><m><rows><item>1</item><item>2</item></rows><rows/><rows><item>3</item></rows><optional>4</optional></m>"#
        )
        #expect(try XMLTreeDecoder().decode(Matrix.self, from: matrixData) == matrix)
    }

    @Test func decodingReadsRealWorldDocuments() throws {
        struct Feed: Decodable, Equatable {
            let id: Int
            let lang: String
            let title: String
            let entry: [Entry]
            let links: Links
            let note: String?
        }
        struct Links: Decodable, Equatable {
            let link: [String]
        }
        struct Entry: Decodable, Equatable {
            let name: String
            let score: Double
        }
        let xml = """
            \u{FEFF}<?xml version="1.0" encoding="UTF-8"?>
            <!-- a comment -->
            <feed id=" 7 " lang='en'>
              <title><![CDATA[a <raw> & text]]> &#x263A;&#65;</title>
              <entry><name>one</name><score>1.5</score></entry>
              <links><link>a</link><link>b</link></links>
              <entry name="two"><score> 2 </score></entry>
            </feed>
            """
        let feed = try XMLTreeDecoder().decode(Feed.self, from: Data(xml.utf8))
        #expect(
            feed
                == Feed(
                    id: 7,
                    lang: "en",
                    title: "a <raw> & text ☺A",
                    entry: [Entry(name: "one", score: 1.5), Entry(name: "two", score: 2)],
                    links: Links(link: ["a", "b"]),
                    note: nil
                )
        )
    }

    @Test(arguments: [
        "<!DOCTYPE a [<!ENTITY x \"y\">]><a>&x;</a>",
        "<a>&unknown;</a>",
        "<a><b></a></b>",
        "<a>",
        "text only",
        "<a/><b/>",
        "<a x=1/>",
        "<a><![CDATA[open</a>",
        "",
        String(repeating: "<a>", count: 300) + String(repeating: "</a>", count: 300),
    ])
    func malformedOrUnsafeDocumentsAreRefused(_ xml: String) {
        #expect(throws: XMLCodingError.self) { try XMLTreeParser.parse(Data(xml.utf8)) }
    }

    @Test func invalidNamesAndCharactersAreRefused() {
        struct Bad: Encodable {
            enum CodingKeys: String, CodingKey { case value = "1st" }
            let value = 1
        }
        #expect(throws: XMLCodingError.self) { try XMLTreeEncoder().encode(Bad(), rootElement: "bad") }
        #expect(throws: XMLCodingError.self) { try XMLTreeEncoder().encode("bell \u{7}", rootElement: "t") }
        #expect(throws: XMLCodingError.self) { try XMLTreeEncoder().encode(1, rootElement: "<t>") }
    }

    @Test func theResponseDecodesXMLAndTheBodyEncodesIt() throws {
        let body = try ResourceRequest.Body.xml(Self.book, rootElement: "book")
        #expect(body.contentType == "application/xml; charset=utf-8")
        guard case .data(let data) = body.content else {
            Issue.record("an XML body is in memory")
            return
        }
        var headers = HTTPFields()
        headers[.contentType] = "application/xml"
        let response = Response(head: HTTPResponse(status: .ok, headerFields: headers), body: Response.Body(data))
        #expect(try response.decodeXML(Book.self) == Self.book)
    }
}
