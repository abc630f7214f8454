import Foundation
import Testing

@testable import Courier

/// The event-stream interpretation, rule by rule, on bytes cut in every way a network can cut
/// them.
@Suite struct ServerSentEventParserTests {
    /// The events of `stream` fed as one chunk, checked to be the same fed byte by byte and cut in
    /// two at every position.
    private func events(
        _ stream: String,
        maximumEventBytes: Int = 1 << 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [ServerSentEvent] {
        try events(Array(stream.utf8), maximumEventBytes: maximumEventBytes, sourceLocation: sourceLocation)
    }

    private func events(
        _ bytes: [UInt8],
        maximumEventBytes: Int = 1 << 20,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws -> [ServerSentEvent] {
        let whole = try parse([bytes], maximumEventBytes: maximumEventBytes)
        let byByte = try parse(bytes.map { [$0] }, maximumEventBytes: maximumEventBytes)
        #expect(byByte == whole, "fed byte by byte", sourceLocation: sourceLocation)
        for cut in 0...bytes.count {
            let split = try parse([Array(bytes[..<cut]), Array(bytes[cut...])], maximumEventBytes: maximumEventBytes)
            #expect(split == whole, "cut at \(cut)", sourceLocation: sourceLocation)
        }
        return whole
    }

    private func parse(_ chunks: [[UInt8]], maximumEventBytes: Int) throws -> [ServerSentEvent] {
        var parser = ServerSentEventParser(maximumEventBytes: maximumEventBytes)
        var events: [ServerSentEvent] = []
        for chunk in chunks { _ = try parser.parse(Data(chunk), into: &events) }
        return events
    }

    @Test func dataLinesOfOneBlockJoinWithLineFeeds() throws {
        let parsed = try events("data: YHOO\ndata: +2\ndata: 10\n\n")
        #expect(parsed == [ServerSentEvent(data: "YHOO\n+2\n10")])
    }

    @Test func idsCarryOverUntilAnEmptyIDResetsThem() throws {
        let parsed = try events(
            ": test stream\n\ndata: first event\nid: 1\n\ndata:second event\nid\n\ndata:  third event\n\n"
        )
        #expect(
            parsed == [
                ServerSentEvent(data: "first event", id: "1"),
                ServerSentEvent(data: "second event"),
                ServerSentEvent(data: " third event"),
            ]
        )
        let carried = try events("id: 7\ndata: a\n\ndata: b\n\n")
        #expect(carried.map(\.id) == ["7", "7"])
    }

    @Test func aDataFieldWithoutValueAddsAnEmptyLineAndAnUnterminatedBlockIsDropped() throws {
        let parsed = try events("data\n\ndata\ndata\n\ndata:")
        #expect(parsed == [ServerSentEvent(data: ""), ServerSentEvent(data: "\n")])
    }

    @Test func oneSpaceAfterTheColonIsNotPartOfTheValue() throws {
        let parsed = try events("data:test\n\ndata: test\n\ndata:  test\n\n")
        #expect(parsed.map(\.data) == ["test", "test", " test"])
    }

    @Test func everyLineEndWorksAndTheyMix() throws {
        let expected = [ServerSentEvent(data: "a\nb"), ServerSentEvent(type: "x", data: "c")]
        #expect(try events("data: a\ndata: b\n\nevent: x\ndata: c\n\n") == expected)
        #expect(try events("data: a\rdata: b\r\revent: x\rdata: c\r\r") == expected)
        #expect(try events("data: a\r\ndata: b\r\n\r\nevent: x\r\ndata: c\r\n\r\n") == expected)
        #expect(try events("data: a\rdata: b\n\r\nevent: x\r\ndata: c\n\r") == expected)
    }

    @Test func aCarriageReturnThenALineFeedInTheNextChunkIsOneLineEnd() throws {
        // "\r" ends the chunk; the "\n" that starts the next must not end an empty line (which
        // would dispatch early).
        let chunks: [[UInt8]] = [Array("data: a\r".utf8), Array("\ndata: b\r".utf8), Array("\n\r\n".utf8)]
        #expect(try parse(chunks, maximumEventBytes: 1 << 20) == [ServerSentEvent(data: "a\nb")])
    }

    @Test func aLeadingByteOrderMarkIsDroppedOnlyAtTheStart() throws {
        let mark: [UInt8] = [0xEF, 0xBB, 0xBF]
        #expect(try events(mark + Array("data: a\n\n".utf8)) == [ServerSentEvent(data: "a")])
        // A second mark is part of the line: the field is "\u{FEFF}data", which is ignored.
        #expect(try events(mark + mark + Array("data: a\n\n".utf8)) == [])
        // A stream that starts with part of a mark and then something else keeps those bytes.
        #expect(try events([0xEF, 0xBB] + Array("\n\ndata: b\n\n".utf8)) == [ServerSentEvent(data: "b")])
        #expect(try events("\n") == [])
    }

    @Test func commentsAndUnknownFieldsAreIgnored() throws {
        let parsed = try events(":hello\n: another\nfoo: bar\ndata: x\nbaz\n:\n\n")
        #expect(parsed == [ServerSentEvent(data: "x")])
    }

    @Test func theEventTypeComesFromTheEventFieldAndDefaultsToMessage() throws {
        let parsed = try events("event: add\ndata: 1\n\nevent:\ndata: 2\n\ndata: 3\n\nevent: only\n\n")
        #expect(parsed.map(\.type) == ["add", "message", "message"])
        #expect(parsed.map(\.data) == ["1", "2", "3"])
    }

    @Test func anIDWithANullIsIgnored() throws {
        let parsed = try events("id: 1\ndata: a\n\nid: 2\u{0}3\ndata: b\n\n")
        #expect(parsed.map(\.id) == ["1", "1"])
    }

    @Test func retryIsTakenOnlyWhenItIsAllDigits() throws {
        let parsed = try events(
            "retry: 2500\ndata: a\n\ndata: b\n\nretry: 1.5\ndata: c\n\nretry: x1\nretry:\ndata: d\n\n"
        )
        #expect(parsed.map(\.retry) == [.milliseconds(2500), nil, nil, nil])
        var parser = ServerSentEventParser(maximumEventBytes: 1 << 20)
        var sink: [ServerSentEvent] = []
        _ = try parser.parse(Data("retry: 10\n\nretry: 1.5\n\n".utf8), into: &sink)
        #expect(parser.reconnectionTime == .milliseconds(10))
        #expect(sink.isEmpty)
        _ = try parser.parse(Data("retry: 99999999999999999999999999\n\n".utf8), into: &sink)
        #expect(parser.reconnectionTime.map { $0 > .seconds(1_000_000) } == true)
    }

    @Test func aBlockWithoutDataDispatchesNothingButKeepsItsID() throws {
        var parser = ServerSentEventParser(maximumEventBytes: 1 << 20)
        var sink: [ServerSentEvent] = []
        _ = try parser.parse(Data("id: 42\n\n".utf8), into: &sink)
        #expect(sink.isEmpty)
        #expect(parser.lastEventID == Array("42".utf8))
    }

    @Test func invalidUTF8BecomesReplacementCharacters() throws {
        let parsed = try events(Array("data: a".utf8) + [0xFF, 0xC3] + Array("b\n\n".utf8))
        #expect(parsed == [ServerSentEvent(data: "a\u{FFFD}\u{FFFD}b")])
    }

    @Test func theLastEventIDCarriesIntoTheNextConnection() throws {
        var parser = ServerSentEventParser(maximumEventBytes: 64, lastEventID: Array("9".utf8))
        var sink: [ServerSentEvent] = []
        _ = try parser.parse(Data("data: a\n\n".utf8), into: &sink)
        #expect(sink == [ServerSentEvent(data: "a", id: "9")])
    }

    @Test func commentsAndBlankLinesCountAsActivityAndPartialLinesDoNot() throws {
        var parser = ServerSentEventParser(maximumEventBytes: 1 << 20)
        var sink: [ServerSentEvent] = []
        #expect(try parser.parse(Data(": ping\n".utf8), into: &sink).sawBoundaryOrComment)
        #expect(try !parser.parse(Data("data: half".utf8), into: &sink).sawBoundaryOrComment)
        #expect(try !parser.parse(Data(" more\n".utf8), into: &sink).sawBoundaryOrComment)
        #expect(try parser.parse(Data("\n".utf8), into: &sink).sawBoundaryOrComment)
        #expect(sink == [ServerSentEvent(data: "half more")])
    }

    @Test func anEventLargerThanTheMaximumThrowsWhereverItIsCut() throws {
        let fits = "data: " + String(repeating: "a", count: 50) + "\n\n"
        #expect(try events(fits, maximumEventBytes: 64).count == 1)
        let cases = [
            "data: " + String(repeating: "a", count: 100) + "\n\n",  // one line
            String(repeating: "data: aaaaaaaaaa\n", count: 10) + "\n",  // many lines
            ":" + String(repeating: "c", count: 100) + "\n",  // a comment
            String(repeating: "x", count: 100),  // a line that never ends
        ]
        for stream in cases {
            let bytes = Array(stream.utf8)
            for chunks in [[bytes], bytes.map { [$0] }, [Array(bytes[..<30]), Array(bytes[30...])]] {
                let error = #expect(throws: CourierError.self) { try parse(chunks, maximumEventBytes: 64) }
                #expect(error?.kind == .responseTooLarge)
                #expect(error?.message.contains("64 bytes") == true)
            }
        }
        // Many events, each within the limit, are fine however long the stream.
        let long = String(repeating: "data: " + String(repeating: "a", count: 40) + "\n\n", count: 1000)
        #expect(try parse([Array(long.utf8)], maximumEventBytes: 64).count == 1000)
    }
}
