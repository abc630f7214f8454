import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Which first lines of a response head are status lines: the version is case-sensitive, the
/// status has three digits in 100–999, and a reason phrase is optional.
struct StatusLineTests {
    private func status(_ line: String) -> Int? {
        Array(line.utf8).withUnsafeBytes { $0.statusCode }
    }

    @Test func validStatusLines() {
        #expect(status("HTTP/1.1 200 OK") == 200)
        #expect(status("HTTP/1.0 404 Not Found") == 404)
        #expect(status("HTTP/1.1 204") == 204)
        #expect(status("HTTP/2 200 ") == 200)  // libcurl's line for an HTTP/2 head
        #expect(status("HTTP/1.1 999 Out Of Range But Valid") == 999)
        #expect(status("HTTP/1.1 100 Continue") == 100)
    }

    @Test(arguments: [
        "Http/1.1 200 OK", "http/1.1 200 OK", "HTTP/1.1 1000 Big", "HTTP/1.1 099 Small", "HTTP/1.1 000 None",
        "HTTP/1.1 20 OK", "HTTP/1.1 2x0 OK", "HTTP/1.1  200 OK", "HTTP/x.1 200 OK", "HTTP/1.1", "HELLO WORLD",
        "HTTP/1.1 200OK", "",
    ])
    func invalidStatusLines(line: String) {
        #expect(status(line) == nil)
    }

    @Test func aHeadThatDoesNotStartWithAStatusLineIsMalformed() {
        var parser = ResponseHeadParser()
        let answer = Array("Http/1.1 200 OK\r\n".utf8).withUnsafeBytes { parser.receive($0) }
        #expect(answer == .malformed)
        #expect(parser.statusCode == 0)
    }

    @Test func fieldsAfterTheFinalHeadAreTrailers() {
        var parser = ResponseHeadParser()
        for line in [
            "HTTP/1.1 100 Continue\r\n", "\r\n", "HTTP/1.1 200 OK\r\n", "A: 1\r\n", "\r\n", "T: 2\r\n", "\r\n",
        ] {
            _ = Array(line.utf8).withUnsafeBytes { parser.receive($0) }
        }
        #expect(parser.statusCode == 200)
        #expect(parser.fields.count == 1)
        #expect(parser.trailerFields?.count == 1)
        #expect(parser.trailerFields?[.init("T")!] == "2")
    }
}
