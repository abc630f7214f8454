import Foundation
import FuzzSupport

// Raw chunked response bodies, as libcurl hands them over while a request body is still being
// sent: the first byte picks where the rest is split in two, and decoding the two pieces must
// give what decoding the whole does (data, end, trailers, or a refusal); the data never
// outgrows the input, and the trailers kept stay within their limit.
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzChunkedBody(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    guard let first = input.bytes.first else { return 0 }
    let body = UnsafeRawBufferPointer(rebasing: input.bytes[1...])
    let split = body.isEmpty ? 0 : Int(first) % (body.count + 1)

    var whole = ChunkedBodyDecoder()
    var wholeData = Data()
    let wholeOutcome = whole.decode(body, into: &wholeData)

    var pieces = ChunkedBodyDecoder()
    var piecesData = Data()
    var outcome = pieces.decode(UnsafeRawBufferPointer(rebasing: body[..<split]), into: &piecesData)
    if outcome == .more {
        outcome = pieces.decode(UnsafeRawBufferPointer(rebasing: body[split...]), into: &piecesData)
    }

    switch (wholeOutcome, outcome) {
    case (.malformed, .malformed): return 0
    case (.malformed, _), (_, .malformed): preconditionFailure("a split changed whether the framing is valid")
    default: break
    }
    precondition(wholeOutcome == outcome, "a split changed the outcome")
    precondition(wholeData == piecesData, "a split changed the data")
    precondition(wholeData.count <= body.count, "more data than input")
    precondition(whole.trailerFields.count == pieces.trailerFields.count, "a split changed the trailers")
    var trailerBytes = 0
    for field in whole.trailerFields { trailerBytes += field.name.rawName.utf8.count + field.value.utf8.count }
    precondition(trailerBytes <= 3 * ResponseHeadLimits.maximumSectionBytes, "trailers past their limit")
    return 0
}

Fuzzer.run(fuzzChunkedBody)
