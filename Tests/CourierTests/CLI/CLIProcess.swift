#if CommandLine
import Foundation

/// Runs the `courier` executable the test target depends on, built next to the test bundle.
enum CLIProcess {
    /// What one run printed, and how it ended.
    struct Outcome: Sendable, CustomStringConvertible {
        let status: Int32
        let standardOutput: Data
        let standardError: String

        var output: String { String(decoding: standardOutput, as: UTF8.self) }
        /// The lines of stderr, without the empty last one.
        var errorLines: [String] { standardError.split(separator: "\n").map(String.init) }

        var description: String { "exit \(status); stdout: \(output.prefix(500)); stderr: \(standardError)" }
    }

    /// The executable's path.
    static func path() throws -> String {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent("courier").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw CLIError(message: "build the package first: \(path) is missing")
        }
        return path
    }

    /// Runs `courier` with `arguments`, `input` on stdin, and `environment` added to a
    /// proxy-free copy of this process's; waits for it to exit.
    static func run(
        _ arguments: [String],
        input: Data? = nil,
        environment: [String: String] = [:]
    ) async throws -> Outcome {
        try await run(executable: try path(), arguments, input: input, environment: environment)
    }

    /// Runs any executable the same way: stdout and stderr into files, so neither can fill a pipe.
    static func run(
        executable: String,
        _ arguments: [String],
        input: Data? = nil,
        environment: [String: String] = [:]
    ) async throws -> Outcome {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-cli-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let outURL = directory.appendingPathComponent("stdout")
        let errURL = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            env[name] = nil
        }
        env.merge(environment) { _, new in new }
        process.environment = env
        process.standardOutput = out
        process.standardError = err
        let inputPipe = Pipe()
        process.standardInput = input == nil ? FileHandle.nullDevice : inputPipe
        let status: Int32 = try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { continuation.resume(returning: $0.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            if let input {
                inputPipe.fileHandleForWriting.write(input)
                try? inputPipe.fileHandleForWriting.close()
            }
        }
        return Outcome(
            status: status,
            standardOutput: (try? Data(contentsOf: outURL)) ?? Data(),
            standardError: String(decoding: (try? Data(contentsOf: errURL)) ?? Data(), as: UTF8.self)
        )
    }

    /// A file with `contents` in a fresh temporary directory.
    static func temporaryFile(_ name: String, contents: Data) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-cli-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try contents.write(to: url)
        return url.path
    }
}

struct CLIError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
#endif
