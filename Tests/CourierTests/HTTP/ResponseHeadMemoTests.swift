import HTTPTypes
import Testing

@testable import Courier

/// A head that repeats its origin's last one shares it; a head that differs gets exactly the
/// fields parsing gives, and becomes the memo.
struct ResponseHeadMemoTests {
    /// Feeds `lines` (a head and its blank line) to a fresh parser with `memo`.
    private func parse(_ lines: [String], memo: ResponseHeadMemo?) -> (ResponseHeadParser, [ResponseHeadParser.Line]) {
        var parser = ResponseHeadParser()
        var answers: [ResponseHeadParser.Line] = []
        for line in lines {
            answers.append(Array(line.utf8).withUnsafeBytes { parser.receive($0, memo: memo) })
        }
        return (parser, answers)
    }

    private let head = [
        "HTTP/1.1 200 OK\r\n", "Server: nginx/1.22.1\r\n", "Date: Fri, 27 Nov 2026 17:00:00 GMT\r\n",
        "Content-Type: application/octet-stream\r\n", "Content-Length: 1024\r\n", "Bad Line Without Colon\r\n",
        "ETag: \"abc\"\r\n", "\r\n",
    ]

    private func fieldList(_ fields: HTTPFields) -> [String] {
        fields.map { "\($0.name.rawName): \($0.value)" }
    }

    @Test func aRepeatedHeadGetsTheSameFieldsAndLength() {
        let memo = ResponseHeadMemo()
        let (first, _) = parse(head, memo: memo)
        let (second, answers) = parse(head, memo: memo)
        let (plain, _) = parse(head, memo: nil)
        #expect(answers == [.statusLine, .field, .field, .field, .field, .field, .field, .end])
        #expect(fieldList(second.fields) == fieldList(plain.fields))
        #expect(second.responseHead?.headerFields == plain.responseHead?.headerFields)
        #expect(second.responseHead?.status.code == 200)
        #expect(second.expectedLength == 1024)
        #expect(first.fields.count == 5)
        #expect(memo.last?.lineCount == 7)
    }

    @Test func aHeadThatDiffersInOneLineGetsItsOwnFieldsAndBecomesTheMemo() {
        let memo = ResponseHeadMemo()
        _ = parse(head, memo: memo)
        var changed = head
        changed[2] = "Date: Fri, 27 Nov 2026 17:00:01 GMT\r\n"
        changed[4] = "Content-Length: 10\r\n"
        let (parser, _) = parse(changed, memo: memo)
        let (plain, _) = parse(changed, memo: nil)
        #expect(fieldList(parser.fields) == fieldList(plain.fields))
        #expect(parser.expectedLength == 10)
        #expect(memo.last?.head.headerFields[.date] == "Fri, 27 Nov 2026 17:00:01 GMT")
        // The next response with the new head matches the new memo.
        let (again, _) = parse(changed, memo: memo)
        #expect(fieldList(again.fields) == fieldList(plain.fields))
        #expect(again.expectedLength == 10)
    }

    @Test func aShorterOrLongerHeadIsNotTheMemo() {
        let memo = ResponseHeadMemo()
        _ = parse(head, memo: memo)
        var shorter = head
        shorter.remove(at: 6)
        let (short, _) = parse(shorter, memo: memo)
        #expect(fieldList(short.fields) == fieldList(parse(shorter, memo: nil).0.fields))
        var longer = shorter
        longer.insert("Transfer-Encoding: gzip, chunked\r\n", at: 6)
        let (long, _) = parse(longer, memo: memo)
        #expect(fieldList(long.fields) == fieldList(parse(longer, memo: nil).0.fields))
        #expect(long.isChunked)
    }

    @Test func aSecondLengthThatDiffersIsStillMalformed() {
        let memo = ResponseHeadMemo()
        _ = parse(head, memo: memo)
        var twice = head
        twice.insert("Content-Length: 5\r\n", at: 5)
        let (_, answers) = parse(twice, memo: memo)
        #expect(answers.contains(.malformed(.contentLength)))
    }

    @Test func anInterimHeadNeverBecomesTheMemo() {
        let memo = ResponseHeadMemo()
        _ = parse(["HTTP/1.1 100 Continue\r\n", "\r\n"] + head, memo: memo)
        #expect(memo.last?.lineCount == 7)
        #expect(memo.last?.head.status.code == 200)
    }
    @Test func aHeadIsComparedWithTheMemoAsItWasWhenItBegan() {
        let memo = ResponseHeadMemo()
        _ = parse(head, memo: memo)
        // Transfer A has read the status line and two fields when transfer B, on another
        // connection, ends a head that differs and becomes the memo.
        var a = ResponseHeadParser()
        for line in head[0..<3] { _ = Array(line.utf8).withUnsafeBytes { a.receive($0, memo: memo) } }
        var other = head
        other[2] = "Date: Fri, 27 Nov 2026 17:00:09 GMT\r\n"
        other[4] = "Content-Length: 7\r\n"
        _ = parse(other, memo: memo)
        for line in head[3...] { _ = Array(line.utf8).withUnsafeBytes { a.receive($0, memo: memo) } }
        #expect(fieldList(a.fields) == fieldList(parse(head, memo: nil).0.fields))
        #expect(a.responseHead?.headerFields[.date] == "Fri, 27 Nov 2026 17:00:00 GMT")
        #expect(a.expectedLength == 1024)
    }
}
