import Courier
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The authorization server and the resource gateway behind TLS, started by
/// Tests/Servers/serve.py (`--only oauth,oauth_tls`) once per test process; serve.py stops
/// them when this process exits (its stdin is a pipe only this process holds).
struct FleetServers: Sendable {
    /// The authorization server over plain HTTP, for the tests' admin calls.
    let oauth: URL
    /// The authorization server behind TLS, for Courier.
    let oauthTLS: URL
    /// The resource gateway behind TLS, for Courier.
    let gatewayTLS: URL
    /// The CA bundle the TLS front's certificate chains to.
    let caBundle: String
    /// The TLS front's pins (leaf and intermediate keys), `sha256//…`.
    let pins: [String]

    /// The servers, started on first use.
    static func shared() async throws -> FleetServers { try await Starter.shared.servers() }

    private static let repositoryRoot = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Fleet
        .deletingLastPathComponent()  // CourierSQLiteTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// Starts serve.py and waits, at most two minutes, for its ready file.
    fileprivate static func start() async throws -> FleetServers {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-sqlite-servers-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let readyPath = directory.appendingPathComponent("ready.json").path
        let logPath = directory.appendingPathComponent("serve.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let pipe = Pipe()
        // The write end must not leak into the fleet's members: any holder keeps serve.py alive.
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", repositoryRoot.appendingPathComponent("Tests/Servers/serve.py").path,
            "--ready-file", readyPath, "--only", "oauth,oauth_tls", "--remove-on-exit", directory.path,
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["PYTHONUNBUFFERED": "1"]) { $1 }
        process.standardInput = pipe
        process.standardOutput = log
        process.standardError = log
        try process.run()
        keptPipes.withLock { $0.append(pipe) }

        let deadline = ContinuousClock.now + .seconds(120)
        while !FileManager.default.fileExists(atPath: readyPath) {
            let output = {
                (try? String(contentsOfFile: logPath, encoding: .utf8)).map { String($0.suffix(3000)) } ?? ""
            }
            guard process.isRunning else {
                throw TestSetupError(message: "serve.py exited with \(process.terminationStatus): \(output())")
            }
            guard ContinuousClock.now < deadline else {
                throw TestSetupError(message: "serve.py was not ready in 120 s: \(output())")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        struct Ready: Decodable {
            let urls: [String: String]
            let pki: [String: String]
            let pins: [String: String]
        }
        let ready = try JSONDecoder().decode(Ready.self, from: Data(contentsOf: URL(fileURLWithPath: readyPath)))
        guard let oauth = ready.urls["oauth"].flatMap(URL.init(string:)),
            let oauthTLS = ready.urls["oauth_tls"].flatMap(URL.init(string:)),
            let gatewayTLS = ready.urls["gateway_tls"].flatMap(URL.init(string:))
        else { throw TestSetupError(message: "serve.py did not start the OAuth2 servers behind TLS") }
        return FleetServers(
            oauth: oauth,
            oauthTLS: oauthTLS,
            gatewayTLS: gatewayTLS,
            caBundle: ready.pki["ca_bundle"] ?? "",
            pins: ["leaf", "intermediate"].compactMap { ready.pins[$0] }.map { "sha256//" + $0 }
        )
    }

    /// The pipes to serve.py, kept open for as long as the test process lives.
    private static let keptPipes = LockedBox<[Pipe]>([])

    private actor Starter {
        static let shared = Starter()
        private var starting: Task<FleetServers, any Error>?

        func servers() async throws -> FleetServers {
            if let starting { return try await starting.value }
            let task = Task { try await FleetServers.start() }
            starting = task
            return try await task.value
        }
    }
}
