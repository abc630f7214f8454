import Courier
public import Logging

import struct Foundation.Data
import class Foundation.FileHandle

/// Counts what Courier's token brokers log about their tokens (the `courier.token.event`
/// metadata: `renewed`, `adopted`, `lease`, `conflict`, `degraded`) and the warnings, and
/// writes each such event as a JSON line to standard error, as it happens, so that a test
/// can see which member holds a lease.
public final class FleetEventCounter: Sendable {
    private let counts = LockedBox<[String: Int]>([:])
    private let member: String

    /// Creates a counter.
    ///
    /// - Parameter member: The member's name, in each event line.
    public init(member: String) { self.member = member }

    /// The counts so far, by event; warnings under `warnings`.
    public var snapshot: [String: Int] { counts.withLock { $0 } }

    /// A logger whose messages go to this counter.
    public func logger() -> Logger {
        var logger = Logger(label: "courier.fleet") { _ in Handler(counter: self) }
        logger.logLevel = .debug
        return logger
    }

    fileprivate func record(_ level: Logger.Level, event: String?) {
        counts.withLock { counts in
            if let event { counts[event, default: 0] += 1 }
            if level >= .warning { counts["warnings", default: 0] += 1 }
        }
        guard let event else { return }
        let line = "{\"member\":\"\(member)\",\"event\":\"\(event)\"}\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    private struct Handler: LogHandler {
        let counter: FleetEventCounter
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .debug

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let value = event.metadata?["courier.token.event"].map { "\($0)" }
            guard value != nil || event.level >= .warning else { return }
            counter.record(event.level, event: value)
        }
    }
}
