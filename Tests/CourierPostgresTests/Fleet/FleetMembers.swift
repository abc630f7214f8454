#if Postgres
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What a fleet member prints when it is done (the fields these tests read).
struct FleetMemberSummary: Decodable, Sendable {
    let member: String
    let requests: Int
    let successes: Int
    let failures: [String: Int]
    let renewals: Int
    let adopted: Int
    let leases: Int
    let conflicts: Int
    let degraded: Int
    let warnings: Int

    var failureCount: Int { failures.values.reduce(0, +) }
}

/// One member process: `CourierPostgresFleetMember`, its output in files.
final class FleetMember: @unchecked Sendable {
    // `@unchecked`: `process` is only asked whether it runs and for its pid and status.
    let name: String
    private let process: Process
    private let stdoutPath: String
    private let stderrPath: String

    private init(name: String, process: Process, stdoutPath: String, stderrPath: String) {
        self.name = name
        self.process = process
        self.stdoutPath = stdoutPath
        self.stderrPath = stderrPath
    }

    /// The member executable, built next to the test bundle (the test target depends on it).
    static func executable() throws -> String {
        let tests = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: tests).deletingLastPathComponent()
            .appendingPathComponent("CourierPostgresFleetMember").path
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw ServersError("build the package first: \(path) is missing")
        }
        return path
    }

    /// Starts a member.
    static func launch(
        name: String,
        arguments: [String],
        environment: [String: String],
        directory: URL
    ) throws -> FleetMember {
        let stdoutPath = directory.appendingPathComponent("\(name).out").path
        let stderrPath = directory.appendingPathComponent("\(name).err").path
        _ = FileManager.default.createFile(atPath: stdoutPath, contents: nil)
        _ = FileManager.default.createFile(atPath: stderrPath, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try executable())
        process.arguments = ["--member", name] + arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: stdoutPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: stderrPath))
        try process.run()
        return FleetMember(name: name, process: process, stdoutPath: stdoutPath, stderrPath: stderrPath)
    }

    /// What the member wrote to standard error so far: token events as JSON lines, warnings.
    var errorOutput: String { (try? String(contentsOfFile: stderrPath, encoding: .utf8)) ?? "" }

    /// How many times the member logged the token event `event` (`lease`, `renewed`, …).
    func eventCount(_ event: String) -> Int {
        errorOutput.components(separatedBy: "\"event\":\"\(event)\"").count - 1
    }

    /// Waits for the member to exit (killing it after `limit`) and reads its summary.
    func summary(within limit: Duration) async throws -> FleetMemberSummary {
        let deadline = ContinuousClock.now + limit
        while process.isRunning {
            if ContinuousClock.now > deadline {
                Glibc.kill(process.processIdentifier, SIGKILL)
                throw ServersError("\(name) did not finish in \(limit): \(errorOutput.suffix(2000))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        let output = (try? String(contentsOfFile: stdoutPath, encoding: .utf8)) ?? ""
        guard process.terminationStatus == 0, let line = output.split(separator: "\n").last else {
            throw ServersError(
                "\(name) exited with status \(process.terminationStatus): \(output.suffix(1000)) \(errorOutput.suffix(2000))"
            )
        }
        return try JSONDecoder().decode(FleetMemberSummary.self, from: Data(line.utf8))
    }

    /// Kills the member if it still runs (a test that failed early).
    func stop() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
#endif
