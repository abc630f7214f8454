import Courier
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A test executable run as a process of its own: its standard output as lines, read on a
/// thread of their own as they come; its standard error in a file.
final class ChildProcess: @unchecked Sendable {
    // `@unchecked`: `process` is only asked for its pid and status, and told to stop.
    private let process: Process
    /// Whether it exited, and who waits for that.
    private let exited = LockedBox<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))
    /// The lines of its standard output, until it ends.
    let lines: AsyncStream<String>
    /// Where its standard error goes.
    let errorPath: String
    /// Its standard input, when it was started with one; closing it tells it to stop.
    private let input: FileHandle?

    /// The executable `name`, built next to the test bundle (the test target depends on it).
    static func executable(_ name: String) throws -> String {
        let tests = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: tests).deletingLastPathComponent().appendingPathComponent(name).path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw TestSetupError(message: "build the package first: \(path) is missing")
        }
        return path
    }

    /// Starts `executable` with `arguments`, `environment` added to this process's.
    ///
    /// - Parameter withInput: Whether to give it a standard input that ``closeInput()``
    ///   closes (otherwise it reads an empty one).
    init(
        executable: String,
        arguments: [String],
        environment: [String: String] = [:],
        errorPath: String,
        withInput: Bool = false
    ) throws {
        self.errorPath = errorPath
        _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
        let pipe = Pipe()
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        let inputPipe = withInput ? Pipe() : nil
        input = inputPipe?.fileHandleForWriting
        if let inputPipe {
            process.standardInput = inputPipe
        } else {
            process.standardInput = FileHandle.nullDevice
        }
        process.standardOutput = pipe
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
        let (lines, continuation) = AsyncStream.makeStream(of: String.self)
        self.lines = lines
        let exited = self.exited
        process.terminationHandler = { _ in
            let waiters = exited.withLock { state -> [CheckedContinuation<Void, Never>] in
                state.done = true
                defer { state.waiters = [] }
                return state.waiters
            }
            for waiter in waiters { waiter.resume() }
        }
        try process.run()
        let reading = pipe.fileHandleForReading
        // Blocking reads, on a thread of their own rather than the cooperative pool.
        Thread {
            var buffer = Data()
            while true {
                let chunk = reading.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
                while let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                    buffer.removeSubrange(buffer.startIndex...newline)
                }
            }
            continuation.finish()
        }.start()
    }

    /// Writes `line` and a newline to its standard input, then closes it: it reads the line,
    /// then the end of its input (which a copy of the pipe inherited by another child would
    /// hold back).
    func closeInput(after line: String) {
        // A process that ended already must not end this one with SIGPIPE.
        signal(SIGPIPE, SIG_IGN)
        try? input?.write(contentsOf: Data((line + "\n").utf8))
        try? input?.close()
    }

    /// SIGKILL: the process dies at once, wherever it is.
    func kill() {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
    }

    /// Returns once the process has exited; kills it after `limit`.
    func waitForExit(within limit: Duration) async {
        let watchdog = Task { [self] in
            try await Task.sleep(for: limit)
            kill()
        }
        defer { watchdog.cancel() }
        await withCheckedContinuation { continuation in
            let done = exited.withLock { state -> Bool in
                if !state.done { state.waiters.append(continuation) }
                return state.done
            }
            if done { continuation.resume() }
        }
    }

    /// What it wrote to standard error.
    var errorOutput: String { (try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "" }

    /// Whether it ended by itself with status 0.
    var succeeded: Bool { !process.isRunning && process.terminationReason == .exit && process.terminationStatus == 0 }
}
