import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The chunked framing Courier reads itself when a response ends before its request body.
struct ChunkedBodyDecoderTests {
    private func decode(_ pieces: [String]) -> (Data, ChunkedBodyDecoder.Outcome, ChunkedBodyDecoder) {
        var decoder = ChunkedBodyDecoder()
        var data = Data()
        var outcome = ChunkedBodyDecoder.Outcome.more
        for piece in pieces {
            outcome = Array(piece.utf8).withUnsafeBytes { decoder.decode($0, into: &data) }
            if case .malformed = outcome { break }
        }
        return (data, outcome, decoder)
    }

    @Test func chunksAndTrailersInOnePiece() {
        let (data, outcome, decoder) = decode(["5\r\nHello\r\n6; ext=1\r\n World\r\n0\r\nX-Checksum: abc\r\n\r\n"])
        #expect(String(decoding: data, as: UTF8.self) == "Hello World")
        #expect(outcome == .end)
        #expect(decoder.trailerFields[HTTPField.Name("X-Checksum")!] == "abc")
    }

    @Test func everySplitOfTheBytesDecodesAlike() {
        let whole = "a\r\n0123456789\r\n1\r\nx\r\n0\r\nX-One: 1\r\nX-Two: 2\r\n\r\n"
        for split in 0...whole.utf8.count {
            let bytes = Array(whole.utf8)
            let (data, outcome, decoder) = decode([
                String(decoding: bytes[..<split], as: UTF8.self), String(decoding: bytes[split...], as: UTF8.self),
            ])
            #expect(String(decoding: data, as: UTF8.self) == "0123456789x", "split at \(split)")
            #expect(outcome == .end, "split at \(split)")
            #expect(decoder.trailerFields.count == 2, "split at \(split)")
        }
    }

    @Test func anEmptyBodyEndsAtTheLastChunk() {
        let (data, outcome, decoder) = decode(["0\r\n\r\n"])
        #expect(data.isEmpty)
        #expect(outcome == .end)
        #expect(decoder.trailerFields.isEmpty)
    }

    @Test func unfinishedFramingAsksForMore() {
        #expect(decode(["5\r\nHel"]).1 == .more)
        #expect(decode(["0\r\nX-A: 1\r\n"]).1 == .more)
    }

    @Test(arguments: ["zz\r\n", "5\r\nHelloXX\r\n", "1234567890abcdef0\r\n", "\r\n"])
    func brokenFramingIsMalformed(input: String) {
        guard case .malformed = decode([input]).1 else {
            Issue.record("\(input.debugDescription) was not refused")
            return
        }
    }
}
