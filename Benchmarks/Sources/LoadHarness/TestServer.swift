import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// The harness's own nginx on 127.0.0.1, pinned to CPU 0, with a test CA it generates.
///
/// - `http://127.0.0.1:<http1Port>/bytes/{1k,1m}`: HTTP/1.1 keep-alive.
/// - `https://127.0.0.1:<tlsPort>/bytes/{1k,1m}`: TLS 1.2/1.3 with HTTP/2 by ALPN.
/// - `/slow/1k` on both: the same 1 KiB, released by `limit_req` at `slowRate` requests/s,
///   so that thousands of requests stay in flight in the client.
/// - `/sse/events` on both: ``EventStreamFile``, served as `text/event-stream`.
///
/// One worker process, `keepalive_requests` high enough that no connection is ever closed
/// during a run, `http2_max_concurrent_streams` above the highest concurrency, access log off.
final class TestServer {
    let directory: URL
    let http1Port: Int
    let tlsPort: Int
    let slowRate: Int
    let serverCPU: Int
    let scheduler: Scheduler
    private var process: Process?

    var caFile: String { directory.appendingPathComponent("ca.pem").path }
    var http1Origin: String { "http://127.0.0.1:\(http1Port)" }
    var tlsOrigin: String { "https://127.0.0.1:\(tlsPort)" }

    init(directory: URL, slowRate: Int, serverCPU: Int, scheduler: Scheduler) throws {
        self.scheduler = scheduler
        self.directory = directory
        self.http1Port = try freePort()
        self.tlsPort = try freePort()
        self.slowRate = slowRate
        self.serverCPU = serverCPU
    }

    /// Writes the certificates, bodies and configuration, starts nginx and waits until both
    /// ports accept connections.
    func start() throws {
        let fm = FileManager.default
        try fm.createDirectory(at: directory, withIntermediateDirectories: true)
        for sub in ["www/bytes", "www/slow", "www/sse", "tmp"] {
            try fm.createDirectory(at: directory.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try writeBody("www/bytes/1k", count: 1024)
        try writeBody("www/bytes/1m", count: 1 << 20)
        try writeBody("www/slow/1k", count: 1024)
        try EventStreamFile.write(to: directory.appendingPathComponent("www" + EventStreamFile.path))
        try makeCertificates()
        try configuration().write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
        // nginx's workers may run as another user: let them read the tree.
        _ = try shell("chmod -R a+rX \(quote(directory.path))")

        let nginx = Process()
        let command =
            scheduler.prefix + [
                "/usr/bin/taskset", "-c", "\(serverCPU)", try which("nginx"),
                "-p", directory.path, "-c", directory.appendingPathComponent("nginx.conf").path,
            ]
        nginx.executableURL = URL(fileURLWithPath: command[0])
        nginx.arguments = Array(command.dropFirst())
        nginx.standardOutput = FileHandle.nullDevice
        nginx.standardError = try FileHandle(forWritingTo: touch(directory.appendingPathComponent("nginx.stderr")))
        try nginx.run()
        process = nginx
        let deadline = Date().addingTimeInterval(10)
        while !(canConnect(port: http1Port) && canConnect(port: tlsPort)) {
            guard nginx.isRunning, Date() < deadline else {
                let log =
                    (try? String(contentsOf: directory.appendingPathComponent("error.log"), encoding: .utf8)) ?? ""
                let stderr =
                    (try? String(contentsOf: directory.appendingPathComponent("nginx.stderr"), encoding: .utf8)) ?? ""
                stop()
                throw HarnessError("nginx did not start:\n\(stderr)\(log)")
            }
            usleep(20_000)
        }
    }

    /// Stops nginx (fast shutdown) and waits for it.
    func stop() {
        guard let process, process.isRunning else { return }
        kill(process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while process.isRunning && Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
        self.process = nil
    }

    private func writeBody(_ path: String, count: Int) throws {
        var generator = SystemRandomNumberGenerator()
        var bytes = [UInt8](repeating: 0, count: count)
        for index in bytes.indices { bytes[index] = generator.next() }
        try Data(bytes).write(to: directory.appendingPathComponent(path))
    }

    private func makeCertificates() throws {
        let d = quote(directory.path)
        let ext = """
            subjectAltName=IP:127.0.0.1,DNS:localhost
            basicConstraints=critical,CA:FALSE
            keyUsage=critical,digitalSignature
            extendedKeyUsage=serverAuth
            """
        try ext.write(to: directory.appendingPathComponent("server.ext"), atomically: true, encoding: .utf8)
        _ = try shell(
            """
            cd \(d) && \
            openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 7 \
              -keyout ca.key -out ca.pem -subj '/CN=Courier Benchmark CA' \
              -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign && \
            openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
              -keyout server.key -out server.csr -subj '/CN=127.0.0.1' && \
            openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 7 \
              -extfile server.ext -out server.pem
            """
        )
    }

    private func configuration() -> String {
        let d = directory.path
        let user = geteuid() == 0 ? "user root root;" : ""
        let slow = """
            location /slow/ { limit_req zone=slow burst=1000000; }
                    location /sse/ { types { } default_type text/event-stream; }
            """
        return """
            # Generated by LoadHarness for one benchmark run.
            \(user)
            worker_processes 1;
            daemon off;
            pid \(d)/nginx.pid;
            error_log \(d)/error.log warn;
            worker_rlimit_nofile 65536;
            events { worker_connections 32768; multi_accept on; }
            http {
                access_log off;
                default_type application/octet-stream;
                sendfile on;
                tcp_nopush on;
                tcp_nodelay on;
                etag off;
                keepalive_requests 1000000000;
                keepalive_timeout 600s;
                http2_max_concurrent_streams 1024;
                open_file_cache max=64 inactive=600s;
                open_file_cache_valid 600s;
                client_body_temp_path \(d)/tmp/body;
                proxy_temp_path \(d)/tmp/proxy;
                fastcgi_temp_path \(d)/tmp/fastcgi;
                uwsgi_temp_path \(d)/tmp/uwsgi;
                scgi_temp_path \(d)/tmp/scgi;
                limit_req_zone $binary_remote_addr zone=slow:1m rate=\(slowRate)r/s;
                limit_req_log_level info;
                server {
                    listen 127.0.0.1:\(http1Port) reuseport backlog=4096;
                    root \(d)/www;
                    \(slow)
                }
                server {
                    listen 127.0.0.1:\(tlsPort) ssl http2 reuseport backlog=4096;
                    ssl_certificate \(d)/server.pem;
                    ssl_certificate_key \(d)/server.key;
                    ssl_protocols TLSv1.2 TLSv1.3;
                    ssl_session_cache shared:tls:1m;
                    root \(d)/www;
                    \(slow)
                }
            }
            """
    }
}

struct HarnessError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A TCP port on 127.0.0.1 that nothing listens on right now.
func freePort() throws -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw HarnessError("socket() failed") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = 0
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { sa -> Bool in
            bind(fd, sa, length) == 0 && getsockname(fd, sa, &length) == 0
        }
    }
    guard bound else { throw HarnessError("bind() failed") }
    return Int(UInt16(bigEndian: address.sin_port))
}

func canConnect(port: Int) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = UInt16(port).bigEndian
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    return withUnsafePointer(to: &address) { pointer in
        pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
        }
    }
}

/// Runs `/bin/sh -c command` and returns its stdout; throws with its stderr on failure.
@discardableResult
func shell(_ command: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.run()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    let error = err.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw HarnessError(
            "`\(command)` failed (\(process.terminationStatus)):\n\(String(decoding: error, as: UTF8.self))"
        )
    }
    return String(decoding: output, as: UTF8.self)
}

/// The output of a command, or `fallback` when it fails (for the machine facts).
func shellOr(_ command: String, _ fallback: String = "unknown") -> String {
    let output = (try? shell(command + " 2>&1"))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? ""
    return output.isEmpty ? fallback : output
}

func which(_ tool: String) throws -> String {
    for directory in ["/usr/sbin", "/usr/bin", "/usr/local/sbin", "/usr/local/bin", "/sbin", "/bin"] {
        let path = "\(directory)/\(tool)"
        if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    throw HarnessError("\(tool) not found")
}

func quote(_ string: String) -> String {
    "'" + string.replacingOccurrences(of: "'", with: "'\\''") + "'"
}

func touch(_ url: URL) -> URL {
    _ = FileManager.default.createFile(atPath: url.path, contents: nil)
    return url
}
