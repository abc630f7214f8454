#if CommandLine
import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// Ctrl-C (SIGINT) and SIGTERM as the cancellation of the work a command is doing, so that it
/// closes its connections and exits with 128 + the signal's number, as shells expect.
enum Interruption {
    /// The signals that interrupt a command.
    static let signals: [Int32] = [SIGINT, SIGTERM]

    /// Runs `work` in a task that SIGINT or SIGTERM cancels.
    ///
    /// - Throws: What `work` threw; a ``CommandFailure`` with exit code 128 + the signal's number,
    ///   and no message, when a signal interrupted it.
    static func cancelling(_ work: @escaping @Sendable () async throws -> Void) async throws {
        let task = Task { try await work() }
        let received = Received()
        let sources = signals.map { number in
            // The default action would end the process at once; the source sees the signal instead.
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                received.signal.withLock { $0 = $0 ?? number }
                task.cancel()
            }
            source.resume()
            return source
        }
        defer {
            for source in sources { source.cancel() }
            for number in signals { signal(number, SIG_DFL) }
        }
        do {
            try await task.value
        } catch {
            if let number = received.signal.withLock({ $0 }) { throw CommandFailure(128 + number, "") }
            throw error
        }
    }

    /// The first signal received, shared with the signal handlers.
    private final class Received: Sendable {
        let signal = Mutex<Int32?>(nil)
    }
}
#endif
