#if OpenAPI
import Courier
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The servers these tests address, started once per test process by Tests/Servers/serve.py:
/// nginx (static files, the upload echo, httpbin under /httpbin), httpbin, the fault server,
/// and the OAuth2 server and resource gateway behind their TLS front.
///
/// serve.py stops everything when its stdin, a pipe this process holds and never writes to,
/// reaches EOF: when the test process exits, however it exits.
struct OpenAPIServers: Sendable {
    /// nginx's plain HTTP server.
    let nginx: URL
    /// httpbin, as nginx proxies it.
    let httpbin: URL
    /// The fault server (Tests/Servers/faults.py).
    let faults: URL
    /// The authorization server behind TLS.
    let oauth: URL
    /// The resource gateway behind TLS.
    let gateway: URL
    /// Trust for 127.0.0.1: the suite's CA, pinned to the leaf or intermediate key.
    let security: SecurityConfiguration
    /// The SHA-256 (lower-case hex) of each file nginx serves under /bytes, by name.
    let fileDigests: [String: String]

    static func shared() async throws -> OpenAPIServers {
        try await Launcher.shared.servers()
    }

    /// How many requests with `key` the fault server has received.
    func faultRequests(key: String) async throws -> Int {
        struct Stats: Decodable {
            struct Key: Decodable { let requests: Int }
            let key: Key
        }
        let session = Session()
        defer { Task { await session.shutdown() } }
        let url = faults.appending(path: "admin/stats").appending(queryItems: [URLQueryItem(name: "key", value: key)])
        let response = try await session.send(ResourceRequest(path: url.absoluteString)).validate()
        return try response.decode(Stats.self).key.requests
    }

    /// Secured resource access to the gateway, signed in as nobody yet.
    func resourceAccess() throws -> ResourceAccess {
        try ResourceAccess(
            configuration: .init(
                resourceBaseURL: gateway,
                authorizationServer: AuthorizationServer(baseURL: oauth),
                transport: .init(proxy: .none, security: security),
                userClient: OAuth2ClientCredentials(clientID: "courier-user", clientSecret: "user-secret"),
                deviceClient: OAuth2ClientCredentials(clientID: "courier-device", clientSecret: "device-secret"),
                tokenStore: InMemoryTokenStore()
            )
        )
    }
}

struct ServersUnavailable: Error, CustomStringConvertible {
    let description: String
}

/// Starts serve.py once and keeps it running for the rest of the process.
private actor Launcher {
    static let shared = Launcher()

    private var starting: Task<OpenAPIServers, any Error>?
    /// serve.py's stdin; closing it (at exit) stops the servers.
    private var stdin: Pipe?

    func servers() async throws -> OpenAPIServers {
        if let starting { return try await starting.value }
        let task = Task { try await start() }
        starting = task
        return try await task.value
    }

    private func start() async throws -> OpenAPIServers {
        let root = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent()
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-openapi-tests-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let readyFile = directory.appendingPathComponent("ready.json")

        let stdin = Pipe()
        _ = fcntl(stdin.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let log = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", root.appendingPathComponent("Tests/Servers/serve.py").path,
            "--ready-file", readyFile.path, "--only", "nginx,httpbin,faults,oauth,oauth_tls",
            "--remove-on-exit", directory.path,
        ]
        process.environment = ProcessInfo.processInfo.environment.merging(["PYTHONUNBUFFERED": "1"]) { $1 }
        process.standardInput = stdin
        process.standardOutput = log
        process.standardError = log
        try process.run()
        self.stdin = stdin

        // serve.py prints "READY <path>" once the ready file is written; its output ends if it exits.
        let lines = await Self.readLog(log.fileHandleForReading)
        guard FileManager.default.fileExists(atPath: readyFile.path) else {
            throw ServersUnavailable(
                description: "serve.py did not start:\n" + lines.suffix(30).joined(separator: "\n")
            )
        }
        return try Self.parse(readyFile)
    }

    /// Reads serve.py's output on a thread of its own until the line that says it is ready, or
    /// the end; after that line the thread drains the output so that serve.py never blocks on it.
    private static func readLog(_ handle: FileHandle) async -> [String] {
        await withCheckedContinuation { continuation in
            let thread = Thread {
                var text = ""
                var resumed = false
                while case let data = handle.availableData, !data.isEmpty {
                    guard !resumed else { continue }
                    text += String(decoding: data, as: UTF8.self)
                    if text.contains("READY ") {
                        resumed = true
                        continuation.resume(returning: text.components(separatedBy: "\n"))
                    }
                }
                if !resumed { continuation.resume(returning: text.components(separatedBy: "\n")) }
            }
            thread.start()
        }
    }

    private static func parse(_ file: URL) throws -> OpenAPIServers {
        struct Ready: Decodable {
            struct File: Decodable { let sha256: String }
            let urls: [String: String]
            let pki: [String: String]
            let pins: [String: String]
            let files: [String: File]
            let errors: [String: String]?
        }
        let ready = try JSONDecoder().decode(Ready.self, from: Data(contentsOf: file))
        func url(_ name: String) throws -> URL {
            guard let text = ready.urls[name], let url = URL(string: text) else {
                throw ServersUnavailable(description: "serve.py started no \(name): \(ready.errors ?? [:])")
            }
            return url
        }
        let pins = try ["leaf", "intermediate"].map { try SPKIPin("sha256//" + (ready.pins[$0] ?? "")) }
        let policy = try TrustPolicy(
            host: "127.0.0.1",
            pins: pins,
            pinnedCertificateAuthorities: ready.pki["ca_bundle"]
        )
        let nginx = try url("nginx_http")
        return OpenAPIServers(
            nginx: nginx,
            httpbin: nginx.appending(path: "httpbin"),
            faults: try url("faults"),
            oauth: try url("oauth_tls"),
            gateway: try url("gateway_tls"),
            security: try .secured(trust: [policy]),
            fileDigests: ready.files.mapValues(\.sha256)
        )
    }
}
#endif
