import Foundation

#if canImport(Glibc)
import Glibc
#endif

// The real servers the test suite runs against (nginx, httpbin, the OAuth2
// server), all on 127.0.0.1 with free ports, started once per test process by
// `Tests/Servers/serve.py`.
//
//     let env = try await TestServers.shared()
//     let url = env.nginxHTTPS.appending(path: "bytes/1k")
//     // trust env.caBundle, expect env.file("1k").sha256
//
// Lifetime: serve.py's stdin is a pipe whose write end this process keeps open
// and never writes to. When the test process exits, however it exits, the
// kernel closes it; serve.py sees EOF and stops every server and removes its
// work dir. Nothing to tear down in tests.
//
// Set COURIER_SERVERS_READY_FILE=/path/ready.json to use servers you started
// yourself (`python3 Tests/Servers/serve.py --ready-file /path/ready.json --no-stdin`).

/// The nginx server blocks. Each has its own port and its own access log.
enum NginxServer: String, CaseIterable, Sendable {
    /// Plain HTTP/1.1, keep-alive.
    case http
    /// HTTPS (TLS 1.2–1.3), HTTP/2 via ALPN, leaf + intermediate chain to `caBundle`.
    case https
    /// Like `https`, but requires a client certificate signed by `clientCA`.
    /// nginx completes the handshake without one and answers HTTP 400.
    case mtls
    /// A perfect-looking chain for 127.0.0.1 from an independent root (`attackerCA`).
    case attacker
    /// The trusted chain, but the leaf expired on 2021-01-01.
    case expired
    /// The trusted chain, but the leaf is for `other.example` only.
    case wrongHost = "wronghost"
    /// Like `https`, but TLS 1.2 only.
    case tls12
    /// Like `https` (HTTP/2 via ALPN), but `keepalive_requests 5`: after the fifth
    /// request (HTTP/2 stream) on a connection nginx sends GOAWAY and closes it.
    case goaway
}

/// A file nginx serves under `/bytes/` (or `/slow`).
struct TestFile: Sendable, Decodable {
    /// Absolute path on disk.
    let path: String
    let size: Int
    /// Lower-case hex SHA-256 of the contents.
    let sha256: String
    /// Path on every nginx server, e.g. `/bytes/1m`.
    let urlPath: String
    /// For the content-encoded files (`zstd`, `gzip`): the `Content-Encoding` the
    /// server answers with. `size` and `sha256` are those of the decoded body.
    let contentEncoding: String?
    /// For `zstd` (pre-compressed): the size of the encoded body on the wire.
    let encodedSize: Int?
    /// For `zstd`: lower-case hex SHA-256 of the encoded body.
    let encodedSHA256: String?

    private enum CodingKeys: String, CodingKey {
        case path, size, sha256
        case urlPath = "url_path"
        case contentEncoding = "content_encoding"
        case encodedSize = "encoded_size"
        case encodedSHA256 = "encoded_sha256"
    }
}

/// One line of an nginx access log (the servers log JSON).
struct AccessLogEntry: Sendable, Decodable {
    let time: String
    let method: String
    let uri: String
    /// `HTTP/1.1`, `HTTP/2.0`.
    let httpProtocol: String
    let status: Int
    let bytesSent: Int
    let bodyBytesSent: Int
    let requestLength: Int
    /// nginx's connection serial number: equal values = the same TCP connection.
    let connection: Int
    /// How many requests this connection has served so far (keep-alive check).
    let connectionRequests: Int
    /// `OK` when the response was sent completely.
    let completion: String
    /// `TLSv1.2`, `TLSv1.3`, or empty for plain HTTP.
    let sslProtocol: String
    /// `SUCCESS`, `NONE`, `FAILED:reason`, or empty.
    let sslClientVerify: String
    let sslClientSubject: String
    /// `yes` if the request carried an Authorization header (the value is never logged).
    let authorization: String
    let userAgent: String

    private enum CodingKeys: String, CodingKey {
        case time, method, uri, status, connection, completion, authorization
        case httpProtocol = "protocol"
        case bytesSent = "bytes_sent"
        case bodyBytesSent = "body_bytes_sent"
        case requestLength = "request_length"
        case connectionRequests = "connection_requests"
        case sslProtocol = "ssl_protocol"
        case sslClientVerify = "ssl_client_verify"
        case sslClientSubject = "ssl_client_subject"
        case userAgent = "user_agent"
    }
}

/// One line of the forward proxy's request log (`Tests/Servers/proxy.py`).
struct ProxyLogEntry: Sendable, Decodable {
    let time: String
    /// `open` (no authentication) or `auth` (Basic proxy authentication required).
    let listener: String
    let clientPort: Int
    /// `CONNECT` for a tunnel, else the forwarded method.
    let method: String
    /// `host:port` for `CONNECT`, else the absolute URL (`http://127.0.0.1:P/path`).
    let target: String
    /// Whether the request carried a `Proxy-Authorization` header (the value is never logged).
    let proxyAuthorization: Bool
    /// What the proxy answered: the origin's status, 200 for an established tunnel,
    /// 403 (target not on 127.0.0.1/localhost), 407 (authentication), 502, 400.
    let status: Int

    private enum CodingKeys: String, CodingKey {
        case time, listener, method, target, status
        case clientPort = "client_port"
        case proxyAuthorization = "proxy_authorization"
    }
}

/// Where the test servers are. All URLs are `scheme://127.0.0.1:port` (no trailing slash).
struct TestEnvironment: Sendable {
    let nginxHTTP: URL
    let nginxHTTPS: URL
    let nginxMTLS: URL
    let nginxAttacker: URL
    let nginxExpired: URL
    let nginxWrongHost: URL
    let nginxTLS12: URL
    /// HTTPS + HTTP/2 with `keepalive_requests 5` (GOAWAY after five requests).
    let nginxGoAway: URL
    /// httpbin (gunicorn, plain HTTP). Also reachable through nginx as `<nginx URL>/httpbin/...`.
    let httpbin: URL
    /// The OAuth2 authorization server, if `Tests/Servers/oauth/server.py` exists and started.
    let oauth: URL?
    /// The resource gateway that introspects tokens, with `oauth`.
    let gateway: URL?
    /// The forward proxy (`Tests/Servers/proxy.py`): absolute-form HTTP and CONNECT
    /// tunnels to 127.0.0.1/localhost only, no authentication. `http://127.0.0.1:P`.
    let proxy: URL?
    /// The same proxy on another port, requiring Basic proxy authentication
    /// (`proxyUsername`/`proxyPassword`); 407 with `Proxy-Authenticate: Basic` otherwise.
    /// No credentials in the URL.
    let authenticatingProxy: URL?
    /// The proxy's request log: JSON lines (`ProxyLogEntry`), one per request or tunnel,
    /// written before the proxy answers. Shared by both proxy ports and every test.
    let proxyLog: String?
    /// Credentials for `authenticatingProxy` (`proxyuser` / `proxypass`).
    let proxyUsername: String?
    let proxyPassword: String?
    /// The fault server (`Tests/Servers/faults.py`): connections that die when reused,
    /// statuses with `Retry-After`, resets, and per-key counters (`faultStats(key:)` in
    /// FaultServer.swift). Plain HTTP/1.1, keep-alive.
    let faults: URL
    /// The same routes over TLS (HTTP/1.1, the suite's leaf certificate: trust `caBundle`).
    let faultsTLS: URL
    /// The HTTP/2 fault server (`Tests/Servers/h2faults.py`): HTTPS with the suite's leaf
    /// certificate (trust `caBundle`), HTTP/2 only (ALPN `h2`). `/refuse-once?key=K` answers
    /// the first stream of K with RST_STREAM(REFUSED_STREAM), `/refuse-always?key=K` every
    /// one, `/stats?key=K` counts them (Tests/Servers/README.md). `https://127.0.0.1:P`.
    let h2faults: URL
    /// The conformance server (`Tests/Servers/conformance.py`): its routes over plain HTTP/1.1,
    /// keep-alive (`/request`, `/echo`, `/speak`, `/trailers`, …).
    let conformance: URL
    /// The conformance server's answers that are not, or not quite, valid HTTP (`/not_http`,
    /// `/incomplete_body`, …); each closes its connection.
    let conformanceRaw: URL
    /// The routes of `conformance` over TLS with the suite's leaf certificate (trust
    /// `caBundle`), HTTP/2 when the client offers `h2` through ALPN.
    let conformanceTLS: URL
    /// The server-sent events server (`Tests/Servers/sse/server.py`, sse-starlette on uvicorn):
    /// numbered event streams that resume after `Last-Event-ID`, drops, heartbeats, chat-style
    /// streams, raw chunking, per-key `/stats` (Tests/Servers/README.md). Plain HTTP/1.1,
    /// keep-alive. `sseURL(_:)` and `sseStats(key:)` in EventServer.swift.
    let sse: URL

    // PKI (PEM files).
    /// The trusted root CA: the CA bundle to pin/trust for `https`, `mtls`, `tls12`,
    /// `expired` and `wrongHost`.
    let caBundle: String
    let intermediateCA: String
    let leafCertificate: String
    let leafKey: String
    /// Leaf followed by the intermediate, as nginx serves it.
    let leafChain: String
    /// The independent root that signed the `attacker` server's leaf.
    let attackerCA: String
    let attackerCertificate: String
    let expiredCertificate: String
    let wrongHostCertificate: String
    /// The CA the `mtls` server trusts for client certificates.
    let clientCA: String
    let clientCertificate: String
    let clientKey: String
    /// A client certificate from the attacker root: the `mtls` server rejects it (HTTP 400).
    let untrustedClientCertificate: String
    let untrustedClientKey: String
    /// `clientCertificate` and `clientKey` as one PKCS#12 file, protected by
    /// `clientPKCS12Password`.
    let clientPKCS12: String
    let clientPKCS12Password: String
    /// base64(SHA-256(SPKI DER)) by name: `leaf`, `intermediate`, `root`,
    /// `attacker_leaf`, `expired`, `wronghost`. curl's form is `sha256//` + value.
    let spkiPins: [String: String]

    /// Test files by name: `0`, `1k`, `1m`, `64m` (under `/bytes/`), `slow` (`/slow`),
    /// `payload` (~300 KiB of JSON lines, `/bytes/payload.json`), and the same payload
    /// content-encoded: `zstd` (`/encoded/zstd`, pre-compressed, `Content-Encoding: zstd`)
    /// and `gzip` (`/encoded/gzip`, nginx `gzip on`). `size`/`sha256` are the decoded bytes.
    let files: [String: TestFile]
    let accessLogPaths: [NginxServer: String]
    let nginxErrorLog: String?
    /// serve.py's work dir (PKI, files, logs). Removed when the servers stop.
    let workDirectory: String
    /// Optional services that exist but failed to start, with the reason.
    let serviceErrors: [String: String]

    var leafPin: String { spkiPins["leaf", default: ""] }
    var intermediatePin: String { spkiPins["intermediate", default: ""] }
    var rootPin: String { spkiPins["root", default: ""] }
    var attackerLeafPin: String { spkiPins["attacker_leaf", default: ""] }

    func url(_ server: NginxServer) -> URL {
        switch server {
        case .http: nginxHTTP
        case .https: nginxHTTPS
        case .mtls: nginxMTLS
        case .attacker: nginxAttacker
        case .expired: nginxExpired
        case .wrongHost: nginxWrongHost
        case .tls12: nginxTLS12
        case .goaway: nginxGoAway
        }
    }

    /// `url(server)` + `path` (e.g. `"/bytes/1k"`, `"/echo"`, `"/httpbin/get?a=1"`).
    func url(_ server: NginxServer, _ path: String) -> URL {
        URL(string: url(server).absoluteString + (path.hasPrefix("/") ? path : "/" + path))!
    }

    /// `h2faults` + `path` (e.g. `"/refuse-once?key=K"`).
    func h2FaultURL(_ path: String) -> URL {
        URL(string: h2faults.absoluteString + (path.hasPrefix("/") ? path : "/" + path))!
    }

    /// A test file by name (`0`, `1k`, `1m`, `64m`, `slow`).
    func file(_ name: String) -> TestFile {
        guard let file = files[name] else { fatalError("no test file named \(name): \(files.keys.sorted())") }
        return file
    }

    /// The raw lines of a server's access log so far. The logs are shared by all
    /// tests in the process: compare counts before/after, or filter by `uri`.
    func accessLogLines(_ server: NginxServer) throws -> [String] {
        guard let path = accessLogPaths[server] else { return [] }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        return text.split(separator: "\n", omittingEmptySubsequences: true).map(String.init)
    }

    /// The parsed access log of a server so far.
    func accessLog(_ server: NginxServer) throws -> [AccessLogEntry] {
        let decoder = JSONDecoder()
        return try accessLogLines(server).map { try decoder.decode(AccessLogEntry.self, from: Data($0.utf8)) }
    }

    /// `authenticatingProxy` with `proxyUsername:proxyPassword@` in the URL (libcurl takes
    /// proxy credentials from there).
    var authenticatingProxyWithCredentials: URL? {
        guard let proxy = authenticatingProxy, let user = proxyUsername, let password = proxyPassword,
            var components = URLComponents(url: proxy, resolvingAgainstBaseURL: false)
        else { return nil }
        components.user = user
        components.password = password
        return components.url
    }

    /// The parsed proxy request log so far (empty without a proxy). Shared by all
    /// tests in the process: compare counts before/after, or filter by `target`.
    func proxyLogEntries() throws -> [ProxyLogEntry] {
        guard let path = proxyLog else { return [] }
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let decoder = JSONDecoder()
        return try text.split(separator: "\n", omittingEmptySubsequences: true)
            .map { try decoder.decode(ProxyLogEntry.self, from: Data($0.utf8)) }
    }
}

struct TestServersError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}

enum TestServers {
    /// The servers, started on first use (once per process, concurrency-safe).
    /// Every later call returns the same environment, or the same start-up error.
    static func shared() async throws -> TestEnvironment {
        try await ServerSupervisor.shared.environment()
    }

    /// The repository root, found from this file's location
    /// (`<root>/Tests/CourierTests/Support/TestServers.swift`).
    static let repositoryRoot: URL = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()  // Support
        .deletingLastPathComponent()  // CourierTests
        .deletingLastPathComponent()  // Tests
        .deletingLastPathComponent()

    static var serveScript: URL {
        repositoryRoot.appendingPathComponent("Tests/Servers/serve.py")
    }
}

// MARK: - Process management

private actor ServerSupervisor {
    static let shared = ServerSupervisor()

    private var startTask: Task<TestEnvironment, any Error>?
    // Kept for the lifetime of the process: dropping the pipe's write end would stop the servers.
    private var process: Process?
    private var stdinPipe: Pipe?
    private var logHandle: FileHandle?

    func environment() async throws -> TestEnvironment {
        if let startTask { return try await startTask.value }
        let task = Task { try await self.start() }
        startTask = task
        return try await task.value
    }

    private func start() async throws -> TestEnvironment {
        let env = ProcessInfo.processInfo.environment
        if let external = env["COURIER_SERVERS_READY_FILE"], !external.isEmpty {
            return try ReadyFile.load(path: external)
        }

        let hint = "run scripts/bootstrap.sh"
        guard let python = Self.findExecutable("python3", in: env["PATH"]) else {
            throw TestServersError(message: "python3 not found on PATH: \(hint)")
        }
        let script = TestServers.serveScript.path
        guard FileManager.default.fileExists(atPath: script) else {
            throw TestServersError(message: "missing \(script)")
        }

        let dir = FileManager.default.temporaryDirectory
            .appendingPathComponent(
                "courier-tests-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(8))"
            )
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let readyPath = dir.appendingPathComponent("ready.json").path
        let logPath = dir.appendingPathComponent("serve.log").path
        guard FileManager.default.createFile(atPath: logPath, contents: nil),
            let log = FileHandle(forWritingAtPath: logPath)
        else { throw TestServersError(message: "cannot create \(logPath)") }

        let pipe = Pipe()
        #if canImport(Glibc)
        // Keep the write end out of every process spawned later (Foundation does not
        // mark pipes close-on-exec): any holder would keep serve.py alive.
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        #endif
        let process = Process()
        process.executableURL = python
        // serve.py removes `dir` (ready file, its log) when it stops after a good start.
        process.arguments = [script, "--ready-file", readyPath, "--remove-on-exit", dir.path]
        var childEnv = env
        childEnv["PYTHONUNBUFFERED"] = "1"
        process.environment = childEnv
        process.standardInput = pipe
        process.standardOutput = log
        process.standardError = log
        do {
            try process.run()
        } catch {
            throw TestServersError(message: "cannot start \(python.path) \(script): \(error)")
        }
        self.process = process
        self.stdinPipe = pipe
        self.logHandle = log

        let timeout: Double = Double(env["COURIER_SERVERS_START_TIMEOUT"] ?? "") ?? 60
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            if FileManager.default.fileExists(atPath: readyPath) {
                return try ReadyFile.load(path: readyPath)
            }
            if !process.isRunning {
                let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw TestServersError(
                    message: """
                        test servers failed to start (serve.py exit status \(process.terminationStatus)); \
                        if something is missing, \(hint).
                        --- \(logPath) ---
                        \(output.suffix(4000))
                        """
                )
            }
            if Date() > deadline {
                process.terminate()
                let output = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
                throw TestServersError(
                    message: """
                        test servers not ready after \(Int(timeout)) s.
                        --- \(logPath) ---
                        \(output.suffix(4000))
                        """
                )
            }
            try await Task.sleep(nanoseconds: 25_000_000)
        }
    }

    private static func findExecutable(_ name: String, in path: String?) -> URL? {
        let dirs = (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":").map(String.init)
        for dir in dirs where !dir.isEmpty {
            let candidate = URL(fileURLWithPath: dir).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}

// MARK: - Ready file

/// The JSON serve.py writes (schema version 1, see Tests/Servers/README.md).
private struct ReadyFile: Decodable {
    struct Service: Decodable {
        let ports: [String: Int]
        let errorLog: String?
        /// The proxy's JSON-lines request log.
        let requestLog: String?
        let username: String?
        let password: String?

        private enum CodingKeys: String, CodingKey {
            case ports, username, password
            case errorLog = "error_log"
            case requestLog = "request_log"
        }
    }

    let version: Int
    let host: String
    let workDir: String
    let services: [String: Service]
    let accessLogs: [String: String]
    let pki: [String: String]
    let pins: [String: String]
    let files: [String: TestFile]
    let urls: [String: String]
    let errors: [String: String]

    private enum CodingKeys: String, CodingKey {
        case version, host, services, pki, pins, files, urls, errors
        case workDir = "work_dir"
        case accessLogs = "access_logs"
    }

    static func load(path: String) throws -> TestEnvironment {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw TestServersError(message: "cannot read ready file \(path): \(error)")
        }
        let ready: ReadyFile
        do {
            ready = try JSONDecoder().decode(ReadyFile.self, from: data)
        } catch {
            throw TestServersError(message: "cannot decode ready file \(path): \(error)")
        }
        return try ready.environment()
    }

    /// `urls[key]`, e.g. `nginx_https`, `httpbin`, `oauth`.
    private func optionalURL(_ key: String) throws -> URL? {
        guard let string = urls[key] else { return nil }
        guard let url = URL(string: string) else { throw TestServersError(message: "bad URL \(string)") }
        return url
    }

    private func requiredURL(_ key: String, service: String) throws -> URL {
        guard let url = try optionalURL(key) else {
            let why = errors[service].map { ": \($0)" } ?? " (not started; see --only)"
            throw TestServersError(message: "test server \(key) is not available\(why)")
        }
        return url
    }

    private func pkiPath(_ key: String) throws -> String {
        guard let path = pki[key] else { throw TestServersError(message: "ready file has no pki.\(key)") }
        return path
    }

    func environment() throws -> TestEnvironment {
        guard version == 1 else {
            throw TestServersError(message: "ready file schema version \(version), expected 1")
        }
        var logs: [NginxServer: String] = [:]
        for (name, path) in accessLogs {
            if let server = NginxServer(rawValue: name) { logs[server] = path }
        }
        return TestEnvironment(
            nginxHTTP: try requiredURL("nginx_http", service: "nginx"),
            nginxHTTPS: try requiredURL("nginx_https", service: "nginx"),
            nginxMTLS: try requiredURL("nginx_mtls", service: "nginx"),
            nginxAttacker: try requiredURL("nginx_attacker", service: "nginx"),
            nginxExpired: try requiredURL("nginx_expired", service: "nginx"),
            nginxWrongHost: try requiredURL("nginx_wronghost", service: "nginx"),
            nginxTLS12: try requiredURL("nginx_tls12", service: "nginx"),
            nginxGoAway: try requiredURL("nginx_goaway", service: "nginx"),
            httpbin: try requiredURL("httpbin", service: "httpbin"),
            oauth: try optionalURL("oauth"),
            gateway: try optionalURL("gateway"),
            proxy: try optionalURL("proxy"),
            authenticatingProxy: try optionalURL("proxy_auth"),
            proxyLog: services["proxy"]?.requestLog,
            proxyUsername: services["proxy"]?.username,
            proxyPassword: services["proxy"]?.password,
            faults: try requiredURL("faults", service: "faults"),
            faultsTLS: try requiredURL("faults_tls", service: "faults"),
            h2faults: try requiredURL("h2faults", service: "h2faults"),
            conformance: try requiredURL("conformance", service: "conformance"),
            conformanceRaw: try requiredURL("conformance_raw", service: "conformance"),
            conformanceTLS: try requiredURL("conformance_tls", service: "conformance"),
            sse: try requiredURL("sse", service: "sse"),
            caBundle: try pkiPath("ca_bundle"),
            intermediateCA: try pkiPath("intermediate_ca"),
            leafCertificate: try pkiPath("leaf_cert"),
            leafKey: try pkiPath("leaf_key"),
            leafChain: try pkiPath("leaf_chain"),
            attackerCA: try pkiPath("attacker_ca"),
            attackerCertificate: try pkiPath("attacker_cert"),
            expiredCertificate: try pkiPath("expired_cert"),
            wrongHostCertificate: try pkiPath("wronghost_cert"),
            clientCA: try pkiPath("client_ca"),
            clientCertificate: try pkiPath("client_cert"),
            clientKey: try pkiPath("client_key"),
            untrustedClientCertificate: try pkiPath("untrusted_client_cert"),
            untrustedClientKey: try pkiPath("untrusted_client_key"),
            clientPKCS12: try pkiPath("client_p12"),
            clientPKCS12Password: try pkiPath("client_p12_password"),
            spkiPins: pins,
            files: files,
            accessLogPaths: logs,
            nginxErrorLog: services["nginx"]?.errorLog,
            workDirectory: workDir,
            serviceErrors: errors
        )
    }
}
