import CFuzzerDriver
import Foundation

/// The bytes libFuzzer hands to a target, in the forms the targets need.
public struct FuzzInput {
    /// The raw bytes.
    public let bytes: UnsafeRawBufferPointer

    /// Wraps libFuzzer's pointer and length.
    public init(_ start: UnsafePointer<UInt8>?, _ count: Int) {
        bytes = UnsafeRawBufferPointer(start: count == 0 ? nil : start, count: count)
    }

    /// The bytes as `Data` (copied).
    public var data: Data { Data(bytes) }

    /// The bytes decoded as UTF-8, invalid sequences repaired, as a header value reaches Courier.
    public var text: String { String(decoding: bytes, as: UTF8.self) }
}

/// Starts libFuzzer with the process's arguments and a target; never returns.
///
/// A target also exports its function as `LLVMFuzzerTestOneInput`: the linker may take
/// libFuzzer's own `main`, which calls that, instead of the target's top-level code.
public enum Fuzzer {
    /// Runs `target` on every input libFuzzer makes, then exits with libFuzzer's status.
    public static func run(_ target: @convention(c) (UnsafePointer<UInt8>?, Int) -> CInt) -> Never {
        var argc = CommandLine.argc
        var argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>? = CommandLine.unsafeArgv
        exit(LLVMFuzzerRunDriver(&argc, &argv, target))
    }
}
