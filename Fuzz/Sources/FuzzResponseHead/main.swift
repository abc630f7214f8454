import FuzzSupport

// Response heads as libcurl hands them over, one line at a time (status lines, fields, the
// blank line, interim 1xx heads, trailers): any bytes become a head, a `tooLarge` or a
// `malformed`, within Courier's limits; a status is one a valid status line carried (0 before
// one), and the fields and trailers kept never outgrow the lines they came in (a byte that is
// not UTF-8 becomes U+FFFD, three bytes).
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzResponseHead(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    var parser = ResponseHeadParser()
    var lineStart = 0
    var lines = 0
    for index in 0..<input.bytes.count where input.bytes[index] == 0x0A || index == input.bytes.count - 1 {
        let line = UnsafeRawBufferPointer(rebasing: input.bytes[lineStart...index])
        lineStart = index + 1
        lines += 1
        switch parser.receive(line) {
        case .tooLarge, .malformed: return 0
        case .statusLine, .field, .end, .trailer: break
        }
        precondition(parser.statusCode == 0 || (100...999).contains(parser.statusCode), "status \(parser.statusCode)")
        precondition(parser.headBytes <= ResponseHeadLimits.maximumSectionBytes, "head past its limit")
    }
    var bytes = 0
    let trailers = parser.trailerFields ?? [:]
    for field in parser.fields { bytes += field.name.rawName.utf8.count + field.value.utf8.count }
    for field in trailers { bytes += field.name.rawName.utf8.count + field.value.utf8.count }
    precondition(parser.fields.count + trailers.count <= lines, "more fields than lines")
    precondition(bytes <= 3 * input.bytes.count, "fields larger than the input")
    return 0
}

Fuzzer.run(fuzzResponseHead)
