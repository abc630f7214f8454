#if CommandLine
import Foundation

/// Type-checks Swift source against the Courier module the tests were built with.
enum CLISwiftCheck {
    /// Runs `swiftc -typecheck` on `import Courier` followed by `code`; throws with the
    /// compiler's output when it does not type-check.
    static func typecheck(_ code: String) async throws {
        let executable = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        let binDirectory = URL(fileURLWithPath: executable).deletingLastPathComponent()
        let source = try CLIProcess.temporaryFile("main.swift", contents: Data(("import Courier\n\n" + code).utf8))
        var arguments = [
            "-typecheck", "-swift-version", "6", "-I", binDirectory.appendingPathComponent("Modules").path,
        ]
        // The C modules Courier's interface refers to, by their module maps.
        let builds = (try? FileManager.default.contentsOfDirectory(atPath: binDirectory.path)) ?? []
        for build in builds where build.hasSuffix(".build") {
            let map = binDirectory.appendingPathComponent(build).appendingPathComponent("module.modulemap").path
            if FileManager.default.fileExists(atPath: map) { arguments += ["-Xcc", "-fmodule-map-file=\(map)"] }
        }
        let sources = TestServers.repositoryRoot.appendingPathComponent("Sources")
        for target in (try? FileManager.default.contentsOfDirectory(atPath: sources.path)) ?? [] {
            let map = sources.appendingPathComponent(target).appendingPathComponent("module.modulemap").path
            if FileManager.default.fileExists(atPath: map) { arguments += ["-Xcc", "-fmodule-map-file=\(map)"] }
        }
        let outcome = try await CLIProcess.run(executable: try swiftc(), arguments + [source])
        guard outcome.status == 0 else {
            throw CLIError(message: "swiftc -typecheck failed:\n\(outcome.standardError)\n\(code)")
        }
    }

    private static func swiftc() throws -> String {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? ""
        for directory in path.split(separator: ":") + ["/opt/swift/usr/bin", "/usr/bin"] {
            let candidate = "\(directory)/swiftc"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        throw CLIError(message: "swiftc not found on PATH")
    }
}
#endif
