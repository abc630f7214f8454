import Foundation
import FuzzSupport

// Courier's XML parser and decoder: any document becomes a tree and a value, or a typed error.
@testable import Courier

/// A shape with every kind of property the decoder maps: scalars, an optional, an array, a
/// nested value.
struct Shape: Decodable {
    struct Item: Decodable {
        var id: Int?
        var name: String?
        var flag: Bool?
    }
    var title: String?
    var count: Int?
    var ratio: Double?
    var item: [Item]
    var child: Item?
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzXML(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    do {
        let tree = try XMLTreeParser.parse(input.data)
        _ = tree.name
    } catch is XMLCodingError {
    } catch {
        preconditionFailure("not an XMLCodingError: \(error)")
    }
    _ = try? XMLTreeDecoder().decode(Shape.self, from: input.data)
    _ = try? XMLTreeDecoder().decode([String].self, from: input.data)
    return 0
}

Fuzzer.run(fuzzXML)
