import HTTPTypes
import Testing

@testable import Courier

/// The fast path for common response header names must agree with `HTTPField.Name(_:)`.
struct ResponseFieldNameTests {
    private func name(_ text: String) -> HTTPField.Name? {
        Array(text.utf8).withUnsafeBytes { ResponseFieldName.name($0) }
    }

    @Test(arguments: [
        "Content-Length", "content-type", "DATE", "Server", "Connection", "Last-Modified", "ETag", "Accept-Ranges",
        "Cache-Control", "Content-Encoding", "Transfer-Encoding", "Location", "Vary", "Set-Cookie", "Expires", "Age",
        "WWW-Authenticate", "Strict-Transport-Security", "Keep-Alive", "X-Content-Type-Options",
    ])
    func commonNamesMatchTheCheckedPath(text: String) {
        let fast = name(text)
        #expect(fast != nil)
        #expect(fast == HTTPField.Name(text))
        #expect(fast?.canonicalName == text.lowercased())
    }

    @Test func otherNamesAreValidatedAndKeepTheirSpelling() {
        #expect(name("X-Request-Id")?.rawName == "X-Request-Id")
        #expect(name("Content-Lengtx")?.canonicalName == "content-lengtx")  // same length as a common name
        #expect(name("Content Length") == nil)  // a space is not a token character
        #expect(name("Date\r") == nil)
        #expect(name("") == nil)
    }
}
