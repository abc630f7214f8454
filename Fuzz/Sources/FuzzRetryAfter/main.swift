import Foundation
import FuzzSupport

// `Retry-After` values, both forms: any bytes become a delay or nothing, measured against
// several clocks (a date far in the past or future must not overflow).
@testable import Courier

/// 1970, now and 2100.
enum Clocks {
    static let all = [Date(timeIntervalSince1970: 0), Date(), Date(timeIntervalSince1970: 4_102_444_800)]
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzRetryAfter(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    for now in Clocks.all {
        if let delay = RetryAfter.delay(input.text, now: now) {
            precondition(delay >= .zero, "negative delay")
        }
    }
    return 0
}

Fuzzer.run(fuzzRetryAfter)
