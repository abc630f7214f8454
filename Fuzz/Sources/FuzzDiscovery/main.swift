import Foundation
import FuzzSupport

// Authorization server metadata (RFC 8414): any body decodes or throws.
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzDiscovery(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    _ = try? JSONDecoder().decode(AuthorizationServerMetadata.self, from: input.data)
    return 0
}

Fuzzer.run(fuzzDiscovery)
