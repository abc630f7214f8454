import Courier
import Foundation
import HTTPTypes
import Logging

#if canImport(Glibc)
import Glibc
#endif

// The auth part of the demo: secured resource access against the local OAuth2 server
// (authlib) and resource gateway.
//
// The four request kinds, a token that expires and is refreshed once for a burst of concurrent
// requests (counted by the server), a pinned connection, and logout.

/// What the auth demo reads from the ready file (besides `Ready`'s fields).
struct AuthReady: Decodable {
    struct PKI: Decodable {
        let ca_bundle: String
        let leaf_chain: String
        let leaf_key: String
    }
    let urls: [String: String]
    let pki: PKI
    let pins: [String: String]
}

enum AuthDemo {
    static func run(readyFile: String) async throws {
        let ready = try JSONDecoder().decode(AuthReady.self, from: Data(contentsOf: URL(fileURLWithPath: readyFile)))
        guard let oauthPlain = ready.urls["oauth"].flatMap(URL.init(string:)),
            let gatewayPlain = ready.urls["gateway"].flatMap(URL.init(string:))
        else {
            say("\n(no OAuth2 servers in the ready file: skipping the auth demo)")
            return
        }
        // The authorization server and the gateway speak plain HTTP on loopback, and tokens go
        // only over pinned TLS: reach them through TLS server blocks when serve.py provides
        // them, otherwise through a small nginx front started here.
        let front: TLSFront?
        let oauth: URL
        let gateway: URL
        if let https = ready.urls["oauth_https"].flatMap(URL.init(string:)),
            let gatewayHTTPS = ready.urls["gateway_https"].flatMap(URL.init(string:))
        {
            (front, oauth, gateway) = (nil, https, gatewayHTTPS)
        } else {
            let started = try await TLSFront.start(
                upstreams: [oauthPlain, gatewayPlain],
                certificate: ready.pki.leaf_chain,
                key: ready.pki.leaf_key
            )
            (front, oauth, gateway) = (started, started.urls[0], started.urls[1])
        }
        defer { front?.stop() }
        let admin = AdminClient(base: oauthPlain)

        section("Secured resource access: the gateway and the authorization server over pinned TLS")
        let leafPin = try SPKIPin("sha256//" + (ready.pins["leaf"] ?? ""))
        let backupPin = try SPKIPin("sha256//" + (ready.pins["intermediate"] ?? ""))
        let security = try SecurityConfiguration.secured(trust: [
            try TrustPolicy(
                host: "127.0.0.1",
                pins: [leafPin, backupPin],
                pinnedCertificateAuthorities: ready.pki.ca_bundle
            )
        ])
        say("trust    \(security)")
        say("pins     \(leafPin) (leaf), \(backupPin) (intermediate, backup)")
        var configuration = ResourceAccess.Configuration(
            resourceBaseURL: gateway,
            authorizationServer: AuthorizationServer(baseURL: oauth),
            transport: .init(proxy: .none, security: security),
            userClient: OAuth2ClientCredentials(clientID: "courier-user", clientSecret: "user-secret"),
            deviceClient: OAuth2ClientCredentials(clientID: "courier-device", clientSecret: "device-secret")
        )
        configuration.applicationProduct = "CourierDemo/1.0"
        let access = try ResourceAccess(configuration: configuration)
        let user = access.userClient
        let device = access.deviceClient

        section("1. Unauthenticated request: no token, still pinned")
        show(
            try await device.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/status")),
            "GET /api/public/status"
        )

        section("2. Anonymous request: the device token (client credentials)")
        show(
            try await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/info")),
            "GET /api/device/info"
        )
        show(
            try await device.sendAnonymousRequest(ResourceRequest(path: "/api/user/profile")),
            "GET /api/user/profile with the device token"
        )

        section("3. Authenticated request: the user's token")
        do {
            _ = try await user.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        } catch let error as CourierError {
            say("before sign-in: \(error.kind) (\(error.requestKind?.description ?? "-") request)")
        }
        try await admin.post("/admin/lifetime?seconds=3")
        let signedIn = try await user.authenticate(username: "alice", password: "wonderland")
        say("signed in as alice: \(signedIn)")
        show(
            try await user.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile")),
            "GET /api/user/profile"
        )

        section("4. Implicit request: a token exchanged from the user's, scope read only")
        show(
            try await user.sendImplicitRequest(ResourceRequest(path: "/api/user/profile")),
            "GET /api/user/profile (implicit)"
        )

        section("5. The token expires; 200 concurrent requests cause ONE refresh")
        let token = try await user.currentToken()
        say("the user token lives \(Int(token?.lifetime ?? 0)) s; waiting for it to expire …")
        try await Task.sleep(until: .now + .seconds(3.3), clock: .continuous)
        try await admin.post("/admin/lifetime?seconds=3600")
        let before = try await admin.grants()
        let started = ContinuousClock.now
        let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await user.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile")).statusCode
                }
            }
            return try await group.reduce(into: [Int: Int]()) { $0[$1, default: 0] += 1 }
        }
        let after = try await admin.grants()
        say("statuses \(statuses) in \(milliseconds(ContinuousClock.now - started))")
        say(
            "refresh_token grants at the server: \(after["refresh_token", default: 0] - before["refresh_token", default: 0])"
        )

        section("6. A pinned connection: a wrong pin fails the handshake, nothing is sent")
        let wrongPin = try SPKIPin(sha256: [UInt8](repeating: 0xA5, count: 32))
        let pinnedWrong = try SecurityConfiguration.secured(trust: [
            try TrustPolicy(host: "127.0.0.1", pins: [wrongPin], pinnedCertificateAuthorities: ready.pki.ca_bundle)
        ])
        var wrongConfiguration = configuration
        wrongConfiguration.transport.security = pinnedWrong
        let wrong = try ResourceAccess(configuration: wrongConfiguration)
        do {
            _ = try await wrong.deviceClient.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/status"))
            say("unexpected: the request went through")
        } catch {
            say("refused: \(error)")
        }
        await wrong.shutdown()

        section("7. Logout: revoke (RFC 7009), wipe, and the tokens are inactive at the server")
        let current = try await user.currentToken()
        let report = await user.logout()
        say("revoked \(report.revokedTokens) tokens, failures: \(report.failures.count)")
        if let current {
            say("introspection of the access token:  active = \(try await admin.isActive(current.accessToken))")
            if let refresh = current.refreshToken {
                say("introspection of the refresh token: active = \(try await admin.isActive(refresh))")
            }
        }
        do {
            _ = try await user.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/profile"))
        } catch let error as CourierError {
            say("after logout: \(error.kind)")
        }
        show(
            try await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/info")),
            "the device token is not the user's: still valid"
        )
        await access.shutdown()
    }

    static func section(_ title: String) { say("\n== \(title)") }

    static func show(_ response: Response, _ title: String) {
        let body = String(decoding: response.data.prefix(300), as: UTF8.self).trimmingCharacters(
            in: .whitespacesAndNewlines
        )
        say("\(title) → \(response.statusCode) \(body)")
    }
}

/// The authorization server's admin endpoints and introspection, over its plain port. Demo
/// code only: no Courier credential goes there.
struct AdminClient: Sendable {
    let session: Session

    init(base: URL) {
        session = Session(
            configuration: .init(baseURL: base),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
    }

    @discardableResult
    func post(_ path: String, form: String? = nil) async throws -> [String: Any] {
        var request = HTTPRequest(method: .post, path: path)
        if form != nil { request.headerFields[.contentType] = "application/x-www-form-urlencoded" }
        let response = try await session.send(request, body: form.map { .string($0) })
        return (try? JSONSerialization.jsonObject(with: response.data) as? [String: Any]) ?? [:]
    }

    func grants() async throws -> [String: Int] {
        let response = try await session.send(HTTPRequest(method: .get, path: "/admin/stats"))
        let stats = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
        return stats?["grants"] as? [String: Int] ?? [:]
    }

    func isActive(_ token: String) async throws -> Bool {
        let encoded = token.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? token
        let answer = try await post(
            "/oauth/introspect",
            form: "token=\(encoded)&client_id=gateway&client_secret=gateway-secret"
        )
        return answer["active"] as? Bool ?? false
    }
}

/// nginx in front of plain-HTTP upstreams, with the suite's leaf certificate. One process
/// (`master_process off`) under a Python watcher that stops it when this process's pipe closes.
final class TLSFront: Sendable {
    let urls: [URL]
    private let process: Process
    private let pipe: Pipe

    private init(urls: [URL], process: Process, pipe: Pipe) {
        self.urls = urls
        self.process = process
        self.pipe = pipe
    }

    static func start(upstreams: [URL], certificate: String, key: String) async throws -> TLSFront {
        guard
            let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { throw DemoError("nginx not found: run scripts/bootstrap.sh") }
        let directory = NSTemporaryDirectory() + "courier-demo-front-\(getpid())"
        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        let ports = try upstreams.map { _ in try freePort() }
        var servers = ""
        for (port, upstream) in zip(ports, upstreams) {
            servers += """
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(certificate);
                    ssl_certificate_key \(key);
                    location / { proxy_pass \(upstream.absoluteString); proxy_set_header Host $http_host; }
                }

                """
        }
        let config = """
            \(geteuid() == 0 ? "user root root;" : "")
            worker_processes 1; master_process off; daemon off;
            pid \(directory)/nginx.pid; error_log \(directory)/error.log warn;
            events { worker_connections 8192; }
            http {
                access_log off;
                client_body_temp_path \(directory)/tmp/body; proxy_temp_path \(directory)/tmp/proxy;
                fastcgi_temp_path \(directory)/tmp/fastcgi; uwsgi_temp_path \(directory)/tmp/uwsgi;
                scgi_temp_path \(directory)/tmp/scgi;
                http2_max_concurrent_streams 256;
            \(servers)}
            """
        try config.write(toFile: directory + "/nginx.conf", atomically: true, encoding: .utf8)
        let watcher = """
            import ctypes, signal, subprocess, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            libc = ctypes.CDLL(None)
            child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, preexec_fn=lambda: libc.prctl(1, signal.SIGTERM))
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            finally:
                child.terminate()
                child.wait()
            """
        let pipe = Pipe()
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", watcher, nginx, "-p", directory, "-c", directory + "/nginx.conf"]
        process.standardInput = pipe
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while !ports.allSatisfy(accepts) {
            guard process.isRunning, Date() < deadline else {
                throw DemoError("the TLS front did not start; see \(directory)/error.log")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return TLSFront(urls: ports.map { URL(string: "https://127.0.0.1:\($0)")! }, process: process, pipe: pipe)
    }

    func stop() {
        try? pipe.fileHandleForWriting.close()
        process.waitUntilExit()
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let ok = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
            }
        }
        guard ok else { throw DemoError("no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
            }
        }
    }
}
