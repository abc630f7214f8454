import Foundation

/// Latencies of one kind of call, each measured on its own with `ContinuousClock`.
struct Latencies {
    private(set) var samples: [Duration] = []

    /// Records one call's time.
    mutating func record(_ duration: Duration) { samples.append(duration) }

    /// How many calls were measured.
    var count: Int { samples.count }

    /// The `fraction` quantile (0.5: the median), in microseconds; nearest rank.
    func quantile(_ fraction: Double) -> Double {
        guard !samples.isEmpty else { return .nan }
        let sorted = samples.sorted()
        let rank = min(sorted.count - 1, max(0, Int((fraction * Double(sorted.count)).rounded(.up)) - 1))
        return Self.microseconds(sorted[rank])
    }

    /// The slowest call, in microseconds.
    var maximum: Double { samples.max().map(Self.microseconds) ?? .nan }

    /// `duration` in microseconds.
    static func microseconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) * 1e-12
    }
}

/// Resident memory of this process from `/proc/self/status`, in KiB: `VmRSS` (now) or `VmHWM`
/// (the peak).
func statusKiB(_ field: String) -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return -1 }
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? -1
    }
    return -1
}

/// The size of the file at `path` in bytes; 0 when it is missing.
func fileSize(_ path: String) -> UInt64 {
    ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? UInt64) ?? 0
}

/// A small, seeded generator: the same users in every run.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// `bytes` as a Markdown-friendly size: MiB with one decimal.
func mebibytes(_ bytes: UInt64) -> String { String(format: "%.1f MiB", Double(bytes) / 1_048_576) }

/// A failure of the benchmark itself (not of a measured call).
struct BenchmarkFailure: Error, CustomStringConvertible {
    let description: String
}
