#if CommandLine
import ArgumentParser
import Courier
import Foundation

/// The checks every command makes of its trust options, worded once.
enum TrustInput {
    /// Why `-k` is refused, and what to use instead.
    static let insecureRefusal = ValidationError(
        "-k/--insecure is refused: courier always verifies certificates; trust your CA with --cacert FILE"
    )

    /// The `--pin` values as pins; bad usage for one that is not `sha256//BASE64`.
    static func pins(_ texts: [String]) throws -> [SPKIPin] {
        try texts.map { text in
            do { return try SPKIPin(text) } catch { throw CommandFailure.usage("--pin \(text): not sha256//BASE64") }
        }
    }

    /// Checks that the `--cacert` file, when given, can be read.
    static func checkBundle(_ path: String?) throws {
        if let path, !FileManager.default.isReadableFile(atPath: path) {
            throw CommandFailure.usage("--cacert: cannot read \(path.debugDescription)")
        }
    }
}
#endif
