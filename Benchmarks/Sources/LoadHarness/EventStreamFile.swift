import Foundation

/// The event stream the harness's nginx serves at ``path`` with `Content-Type: text/event-stream`:
/// ``count`` events, each `id: <n>`, `data: <1 KiB>` and a blank line (LF line ends), the data
/// printable ASCII, different for every event. Server-sent-event clients read it whole and count
/// its events (`--sizes sse`).
///
/// The file is written a few events at a time, never held whole: a client's `ru_maxrss` starts
/// at the harness's peak resident memory (Linux carries it over when the harness spawns the
/// client), so a large buffer here would show in every client's RSS.
enum EventStreamFile {
    /// Events in the file.
    static let count = 10_000
    /// Bytes of data in each event.
    static let dataBytes = 1024
    /// Where nginx serves it.
    static let path = "/sse/events"

    /// The file's length in bytes.
    static let size: Int = (1...count).reduce(0) { $0 + head(of: $1).count + dataBytes + 2 }

    /// The bytes before an event's data.
    private static func head(of number: Int) -> [UInt8] {
        Array("id: \(number)\ndata: ".utf8)
    }

    /// Writes the file at `url`.
    static func write(to url: URL) throws {
        guard FileManager.default.createFile(atPath: url.path, contents: nil) else {
            throw HarnessError("cannot create \(url.path)")
        }
        let file = try FileHandle(forWritingTo: url)
        defer { try? file.close() }
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(64 * (dataBytes + 24))
        // SplitMix64 from a random seed: fast, and a different file every run.
        var seed = UInt64.random(in: .min ... .max)
        for number in 1...count {
            bytes += head(of: number)
            for _ in 0..<(dataBytes / 8) {
                seed &+= 0x9E37_79B9_7F4A_7C15
                var z = seed
                z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
                z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
                z ^= z >> 31
                for shift in stride(from: 0, to: 64, by: 8) { bytes.append(alphabet[Int((z >> UInt64(shift)) & 63)]) }
            }
            bytes += Array("\n\n".utf8)
            if number % 64 == 0 || number == count {
                try file.write(contentsOf: bytes)
                bytes.removeAll(keepingCapacity: true)
            }
        }
    }
}
