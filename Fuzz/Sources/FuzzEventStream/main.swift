import Foundation
import FuzzSupport

// Event-stream bodies as a server sends them: the first two bytes pick where the rest is cut
// into three pieces, and parsing the pieces must give what parsing the whole does (the same
// events, last event ID and retry, or the same refusal); no event holds more data than the
// input or than the maximum event size allows.
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzEventStream(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    guard input.bytes.count >= 2 else { return 0 }
    let body = Data(input.bytes[2...])
    let first = body.isEmpty ? 0 : Int(input.bytes[0]) % (body.count + 1)
    let second = first + (body.count - first == 0 ? 0 : Int(input.bytes[1]) % (body.count - first + 1))
    let maximum = 256

    func parse(_ pieces: [Data]) -> (events: [ServerSentEvent], parser: ServerSentEventParser, failed: Bool) {
        var parser = ServerSentEventParser(maximumEventBytes: maximum)
        var events: [ServerSentEvent] = []
        for piece in pieces {
            do {
                _ = try parser.parse(piece, into: &events)
            } catch let error as CourierError {
                precondition(error.kind == .responseTooLarge, "an unexpected error: \(error)")
                return (events, parser, true)
            } catch {
                preconditionFailure("an unexpected error: \(error)")
            }
        }
        return (events, parser, false)
    }

    let whole = parse([body])
    let cut = parse([body[..<first], body[first..<second], body[second...]].map { Data($0) })
    precondition(whole.failed == cut.failed, "a cut changed whether the stream is refused")
    if whole.failed { return 0 }
    precondition(whole.events == cut.events, "a cut changed the events")
    precondition(whole.parser.lastEventID == cut.parser.lastEventID, "a cut changed the last event ID")
    precondition(whole.parser.reconnectionTime == cut.parser.reconnectionTime, "a cut changed the retry")
    for event in whole.events {
        precondition(event.data.utf8.count <= body.count * 3, "more data than input")
        precondition(event.data.utf8.count + event.type.utf8.count <= maximum * 3, "an event past the maximum")
    }
    return 0
}

Fuzzer.run(fuzzEventStream)
