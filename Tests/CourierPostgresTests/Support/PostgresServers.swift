#if Postgres
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// What Tests/Servers/serve.py started for these tests: PostgreSQL and, when asked for, the
/// OAuth2 servers.
struct PostgresServers: Sendable {
    let host: String
    let port: Int
    let username: String
    let database: String
    /// Stops the database the way an operator would (`pg_ctl stop -m fast`).
    let stopCommand: [String]
    /// The authorization server, when started (plain HTTP: for admin calls from tests).
    let oauth: URL?
    /// The authorization server behind TLS, for Courier clients.
    let oauthTLS: URL?
    /// The resource gateway behind TLS, for Courier clients.
    let gatewayTLS: URL?
    /// The suite's CA bundle, which the TLS front's certificate chains to.
    let caBundle: String
    /// The TLS front's pins (leaf and intermediate keys), `sha256//…`.
    let pins: [String]
    /// Keeps serve.py running: it stops everything when this goes away (or the process exits).
    let handle: ServeHandle

    /// The servers every test shares: PostgreSQL and the OAuth2 servers, started on first use.
    static func shared() async throws -> PostgresServers {
        try await SharedServers.shared.servers()
    }

    /// A PostgreSQL of its own, for a test that stops it; ``ServeHandle/stop()`` ends it.
    static func disposable() async throws -> PostgresServers {
        try await start(services: "postgres")
    }

    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // CourierPostgresTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    /// Starts serve.py with `--only services` and waits for its ready file.
    static func start(services: String) async throws -> PostgresServers {
        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-pg-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let readyPath = dir.appendingPathComponent("ready.json").path
        let logPath = dir.appendingPathComponent("serve.log").path
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))
        let pipe = Pipe()
        // The write end must not leak into processes spawned later (the fleet's members):
        // any holder would keep serve.py alive.
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", repositoryRoot.appendingPathComponent("Tests/Servers/serve.py").path,
            "--ready-file", readyPath, "--only", services, "--remove-on-exit", dir.path,
        ]
        var environment = ProcessInfo.processInfo.environment
        environment["PYTHONUNBUFFERED"] = "1"
        process.environment = environment
        process.standardInput = pipe
        process.standardOutput = log
        process.standardError = log
        try process.run()
        let handle = ServeHandle(process: process, pipe: pipe, log: log)

        let deadline = ContinuousClock.now + .seconds(120)
        while !FileManager.default.fileExists(atPath: readyPath) {
            let output = {
                (try? String(contentsOfFile: logPath, encoding: .utf8)).map { String($0.suffix(3000)) } ?? ""
            }
            guard process.isRunning else {
                throw ServersError("serve.py exited with status \(process.terminationStatus): \(output())")
            }
            guard ContinuousClock.now < deadline else {
                handle.stop()
                throw ServersError("serve.py was not ready in 120 s: \(output())")
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try parse(readyPath, handle: handle)
    }

    private static func parse(_ path: String, handle: ServeHandle) throws -> PostgresServers {
        struct Ready: Decodable {
            struct Service: Decodable {
                let ports: [String: Int]
                let username: String?
                let database: String?
                let stop_command: [String]?
            }
            let host: String
            let services: [String: Service]
            let urls: [String: String]
            let errors: [String: String]
            let pki: [String: String]
            let pins: [String: String]
        }
        let ready = try JSONDecoder().decode(Ready.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
        guard let postgres = ready.services["postgres"], let port = postgres.ports["postgres"] else {
            throw ServersError("serve.py started no PostgreSQL: \(ready.errors)")
        }
        return PostgresServers(
            host: ready.host,
            port: port,
            username: postgres.username ?? "courier",
            database: postgres.database ?? "postgres",
            stopCommand: postgres.stop_command ?? [],
            oauth: ready.urls["oauth"].flatMap(URL.init(string:)),
            oauthTLS: ready.urls["oauth_tls"].flatMap(URL.init(string:)),
            gatewayTLS: ready.urls["gateway_tls"].flatMap(URL.init(string:)),
            caBundle: ready.pki["ca_bundle"] ?? "",
            pins: ["leaf", "intermediate"].compactMap { ready.pins[$0] }.map { "sha256//" + $0 },
            handle: handle
        )
    }
}

/// serve.py, running until ``stop()`` closes its stdin.
// `@unchecked`: three references set once; `stop()` only closes the pipe, which is thread-safe.
final class ServeHandle: @unchecked Sendable {
    private let process: Process
    private let pipe: Pipe
    private let log: FileHandle

    init(process: Process, pipe: Pipe, log: FileHandle) {
        self.process = process
        self.pipe = pipe
        self.log = log
    }

    /// Closes serve.py's stdin: it stops its servers and removes their files.
    func stop() {
        try? pipe.fileHandleForWriting.close()
    }
}

struct ServersError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// The shared servers, started once per test process.
private actor SharedServers {
    static let shared = SharedServers()
    private var starting: Task<PostgresServers, any Error>?

    func servers() async throws -> PostgresServers {
        if let starting { return try await starting.value }
        let task = Task { try await PostgresServers.start(services: "postgres,oauth,oauth_tls") }
        starting = task
        return try await task.value
    }
}
#endif
