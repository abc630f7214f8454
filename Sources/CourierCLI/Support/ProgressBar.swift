#if CommandLine
import Courier
import Foundation
import Synchronization

/// The progress bar on stderr: bytes, rate and, when the length is known, a bar, the
/// percentage and the time left.
///
/// It appears only once a transfer has taken a second, so quick requests print nothing, and
/// it ends with a newline so that whatever follows starts on a line of its own. The caller
/// shows it only when stderr is a terminal.
final class ProgressBar: Sendable {
    /// Which way the bytes the bar counts go.
    enum Direction: Sendable {
        case upload, download
    }

    private struct State {
        let start = ContinuousClock.now
        var lastDrawn: ContinuousClock.Instant?
        var progress: NetworkTask.Progress?
        var direction = Direction.download
        var isFinished = false
    }

    private let state = Mutex(State())
    private let delay: Duration
    private let write: @Sendable (String) -> Void

    /// Creates a bar that draws after `delay` through `write`.
    init(delay: Duration = .seconds(1), write: @escaping @Sendable (String) -> Void = { StandardError.write($0) }) {
        self.delay = delay
        self.write = write
    }

    /// Takes new progress; redraws at most ten times a second.
    func update(_ progress: NetworkTask.Progress, direction: Direction) {
        let line = state.withLock { state -> String? in
            guard !state.isFinished else { return nil }
            state.progress = progress
            state.direction = direction
            let now = ContinuousClock.now
            guard now - state.start >= delay else { return nil }
            if let lastDrawn = state.lastDrawn, now - lastDrawn < .milliseconds(100) { return nil }
            state.lastDrawn = now
            return Self.render(state, now: now)
        }
        if let line { write(line) }
    }

    /// Draws the final state, `progress` when given, and ends the line, when the bar was
    /// drawn at all.
    func finish(with progress: NetworkTask.Progress? = nil) {
        let line = state.withLock { state -> String? in
            guard !state.isFinished else { return nil }
            state.isFinished = true
            if let progress { state.progress = progress }
            guard state.lastDrawn != nil else { return nil }
            return Self.render(state, now: .now) + "\n"
        }
        if let line { write(line) }
    }

    private static func render(_ state: State, now: ContinuousClock.Instant) -> String {
        let progress = state.progress ?? NetworkTask.Progress(completedBytes: 0, expectedBytes: nil)
        let elapsed = max(0.001, seconds(now - state.start))
        let rate = Double(progress.completedBytes) / elapsed
        let arrow = state.direction == .upload ? "↑" : "↓"
        var line = "\r\(arrow) "
        if let expected = progress.expectedBytes, expected > 0 {
            let fraction = min(1, Double(progress.completedBytes) / Double(expected))
            let filled = Int((fraction * 24).rounded(.down))
            line += "[" + String(repeating: "#", count: filled) + String(repeating: " ", count: 24 - filled) + "] "
            line += String(format: "%3d%% ", Int(fraction * 100))
            line += "\(bytes(progress.completedBytes)) / \(bytes(expected))  \(bytes(Int64(rate)))/s"
            let remaining = rate > 0 ? Double(expected - progress.completedBytes) / rate : 0
            line += "  ETA \(clock(remaining))"
        } else {
            line += "\(bytes(progress.completedBytes))  \(bytes(Int64(rate)))/s"
        }
        return line + "\u{1B}[K"
    }

    private static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// 1536 → "1.5 KiB".
    static func bytes(_ count: Int64) -> String {
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var value = Double(count)
        var unit = 0
        while value >= 1024, unit < units.count - 1 {
            value /= 1024
            unit += 1
        }
        return unit == 0 ? "\(count) B" : String(format: "%.1f", value) + " " + units[unit]
    }

    /// 75 → "1:15".
    static func clock(_ seconds: Double) -> String {
        let whole = max(0, Int(seconds.rounded(.up)))
        return String(format: "%d:%02d", whole / 60, whole % 60)
    }
}
#endif
