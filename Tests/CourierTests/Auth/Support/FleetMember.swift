import Foundation
import Testing

@testable import Courier
@testable import CourierFleet

#if canImport(Glibc)
import Glibc
#endif

/// One fleet member executable (`CourierFleetMember`, or another store's), run as a real OS
/// process: its summary line from standard output, its token events from standard error.
final class FleetMember: Sendable {
    let name: String
    let process: Process
    private let outputPath: String
    private let eventsPath: String
    private let exited = ProcessExit()

    /// The executable `name`, built next to the test bundle (the test target depends on it).
    static func executable(_ name: String = "CourierFleetMember") throws -> String {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let path = URL(fileURLWithPath: executable).deletingLastPathComponent().appendingPathComponent(name).path
        try #require(FileManager.default.isExecutableFile(atPath: path), "build the package first: \(path) is missing")
        return path
    }

    /// The arguments that point a member at the auth test servers.
    static func serverArguments(_ env: AuthEnvironment) -> [String] {
        [
            "--oauth", env.oauth.absoluteString, "--gateway", env.gateway.absoluteString,
            "--ca-bundle", env.caBundle, "--pins", env.pins.map(\.description).joined(separator: ","),
        ]
    }

    /// Starts a member; its output goes to files in `directory`.
    init(name: String, executable: String, arguments: [String], directory: String) throws {
        self.name = name
        outputPath = directory + "/\(name).out"
        eventsPath = directory + "/\(name).events"
        _ = FileManager.default.createFile(atPath: outputPath, contents: nil)
        _ = FileManager.default.createFile(atPath: eventsPath, contents: nil)
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--member", name] + arguments
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: outputPath))
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: eventsPath))
        let exited = self.exited
        process.terminationHandler = { _ in exited.fire() }
        try process.run()
    }

    /// The token events it reported so far (`renewed`, `adopted`, `lease`, …), in order.
    var events: [String] {
        let text = (try? String(contentsOfFile: eventsPath, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line in
            guard let data = line.data(using: .utf8),
                let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
            else { return nil }
            return object["event"] as? String
        }
    }

    /// Waits until it exits (at most `limit`, then kills it and fails) and returns its summary.
    func summary(within limit: Duration) async throws -> FleetSummary {
        try await waitForExit(within: limit)
        let text = (try? String(contentsOfFile: outputPath, encoding: .utf8)) ?? ""
        let line = text.split(separator: "\n").last.map(String.init) ?? ""
        let detail = (try? String(contentsOfFile: eventsPath, encoding: .utf8))?.suffix(2000) ?? ""
        try #require(process.terminationStatus == 0, "\(name) exited with \(process.terminationStatus): \(detail)")
        return try JSONDecoder().decode(FleetSummary.self, from: Data(line.utf8))
    }

    /// Waits until it exits, at most `limit`; a member still running then is killed.
    func waitForExit(within limit: Duration) async throws {
        let watchdog = Task { [process] in
            try await Task.sleep(for: limit)
            if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
        }
        defer { watchdog.cancel() }
        await exited.wait()
        try #require(process.terminationReason == .exit, "\(name) did not end by itself within \(limit)")
    }

    /// SIGKILL: the process dies at once, holding whatever it held.
    func kill() {
        if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
    }
}
