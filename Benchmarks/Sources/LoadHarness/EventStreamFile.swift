import Foundation

/// The event stream the harness's nginx serves at ``path`` with `Content-Type: text/event-stream`:
/// ``count`` events, each `id: <n>`, `data: <1 KiB>` and a blank line (LF line ends), the data
/// printable ASCII, different for every event. Server-sent-event clients read it whole and count
/// its events (`--sizes sse`).
enum EventStreamFile {
    /// Events in the file.
    static let count = 10_000
    /// Bytes of data in each event.
    static let dataBytes = 1024
    /// Where nginx serves it.
    static let path = "/sse/events"

    /// The file's bytes.
    static let contents: Data = {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(count * (dataBytes + 24))
        // SplitMix64 from a random seed: fast, and a different file every run.
        var seed = UInt64.random(in: .min ... .max)
        for number in 1...count {
            bytes += Array("id: \(number)\ndata: ".utf8)
            for _ in 0..<(dataBytes / 8) {
                seed &+= 0x9E37_79B9_7F4A_7C15
                var z = seed
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                for shift in stride(from: 0, to: 64, by: 8) { bytes.append(alphabet[Int((z >> UInt64(shift)) & 63)]) }
            }
            bytes += Array("\n\n".utf8)
        }
        return Data(bytes)
    }()

    /// The file's length in bytes.
    static var size: Int { contents.count }
}
