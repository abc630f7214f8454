import FuzzSupport

// `Content-Type` values: any bytes become a media type or nothing.
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzMediaType(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    if let type = MediaType(parsing: input.text) {
        precondition(!type.type.isEmpty && !type.subtype.isEmpty)
        _ = type.charset
        _ = type.isJSON
        _ = type.isXML
        _ = type.description
    }
    return 0
}

Fuzzer.run(fuzzMediaType)
