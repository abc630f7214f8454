import Foundation
import HTTPTypes

@testable import Courier

#if canImport(Glibc)
import Glibc
#endif

// The OAuth2 authorization server and the resource gateway of Tests/Servers/oauth, reached the
// way secured resource access must reach them: over pinned TLS.
//
// The suite's servers (Tests/Servers/serve.py) serve both over plain HTTP on loopback, and a
// secured session never sends a credential over plain HTTP. Rather than weaken that, the auth
// tests put a TLS front before them: a private nginx (the suite's leaf certificate, signed by
// the suite's CA) with one server block per upstream. Admin calls (/admin/*) and introspection
// go straight to the plain ports from test code, never from Courier.
//
// Lifetime: nginx runs in one process (`master_process off`) under a tiny Python watcher whose
// stdin is a pipe this process keeps open; when the test process exits, however it exits, the
// watcher sees EOF and stops nginx, and nginx also gets SIGTERM through PR_SET_PDEATHSIG if the
// watcher dies. No orphans.
//
// When serve.py gains TLS server blocks for these upstreams, use them instead (see the report).

struct AuthEnvironment: Sendable {
    /// The authorization server behind TLS: `https://127.0.0.1:P`.
    let oauth: URL
    /// The resource gateway behind TLS.
    let gateway: URL
    /// The authorization server behind TLS that requires a client certificate of the suite's
    /// client CA: its mutual-TLS endpoint aliases.
    let oauthMutualTLS: URL
    /// The authorization server's plain port, for admin calls and introspection from tests.
    let oauthPlain: URL
    /// The gateway's plain port, for its admin counters.
    let gatewayPlain: URL
    /// nginx's HTTPS server of the suite (httpbin under /httpbin/).
    let nginxHTTPS: URL
    /// Trust for 127.0.0.1: the suite's CA bundle, pinned to the leaf or intermediate key.
    let security: SecurityConfiguration
    /// The pins of `security`: the suite's leaf and intermediate keys.
    let pins: [SPKIPin]
    let caBundle: String

    var authorizationServer: AuthorizationServer { AuthorizationServer(baseURL: oauth) }

    static let userClient = OAuth2ClientCredentials(clientID: "courier-user", clientSecret: "user-secret")
    static let deviceClient = OAuth2ClientCredentials(clientID: "courier-device", clientSecret: "device-secret")

    /// A configuration for the gateway and the authorization server behind TLS.
    func configuration(
        tokenStore: any TokenStore = InMemoryTokenStore(),
        maximumRenewals: Int = 50,
        renewalWindow: Duration = .seconds(30)
    ) -> ResourceAccess.Configuration {
        var configuration = ResourceAccess.Configuration(
            resourceBaseURL: gateway,
            authorizationServer: authorizationServer,
            transport: .init(proxy: .none, security: security),
            userClient: Self.userClient,
            deviceClient: Self.deviceClient,
            tokenStore: tokenStore
        )
        configuration.renewalLeeway = .seconds(30)
        configuration.maximumRenewals = maximumRenewals
        configuration.renewalWindow = renewalWindow
        configuration.applicationProduct = "CourierAuthTests/1.0"
        return configuration
    }
}

enum AuthServers {
    static func shared() async throws -> AuthEnvironment {
        try await AuthFront.shared.environment()
    }
}

private actor AuthFront {
    static let shared = AuthFront()

    private var startTask: Task<AuthEnvironment, any Error>?
    private var process: Process?
    private var stdinPipe: Pipe?

    func environment() async throws -> AuthEnvironment {
        if let startTask { return try await startTask.value }
        let task = Task { try await self.start() }
        startTask = task
        return try await task.value
    }

    private func start() async throws -> AuthEnvironment {
        let env = try await TestServers.shared()
        guard let oauth = env.oauth, let gateway = env.gateway else {
            throw TestServersError(message: "the OAuth2 test servers did not start: \(env.serviceErrors)")
        }
        guard
            let nginx = ["/usr/sbin/nginx", "/usr/local/sbin/nginx", "/usr/bin/nginx"].first(where: {
                FileManager.default.isExecutableFile(atPath: $0)
            })
        else { throw TestServersError(message: "nginx not found: run scripts/bootstrap.sh") }

        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent(
                "courier-auth-front-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(6))"
            ).path
        for sub in ["", "/tmp"] {
            try FileManager.default.createDirectory(atPath: directory + sub, withIntermediateDirectories: true)
        }
        let oauthPort = try freePort()
        let gatewayPort = try freePort()
        let user = geteuid() == 0 ? "user root root;\n" : ""
        let mutualTLSPort = try freePort()
        // Client certificates from the suite's client CA are verified when offered (`optional`;
        // `on` for the authorization server's mutual-TLS port) and forwarded to the upstream
        // in X-Client-Cert, which binds tokens to them and checks the binding (RFC 8705). A
        // client's own X-Client-Cert never passes: the header is always set here.
        func server(_ port: Int, upstream: URL, requiresCertificate: Bool = false) -> String {
            """
                server {
                    listen 127.0.0.1:\(port) ssl http2;
                    ssl_certificate \(env.leafChain);
                    ssl_certificate_key \(env.leafKey);
                    ssl_protocols TLSv1.2 TLSv1.3;
                    ssl_client_certificate \(env.clientCA);
                    ssl_verify_client \(requiresCertificate ? "on" : "optional");
                    location / {
                        proxy_pass \(upstream.absoluteString);
                        proxy_http_version 1.1;
                        proxy_set_header Host $http_host;
                        proxy_set_header X-Forwarded-Proto https;
                        proxy_set_header X-Client-Cert $ssl_client_escaped_cert;
                        proxy_read_timeout 1h;
                        # Bytes pass as they come: a streamed body reaches the client while
                        # the gateway is still producing it.
                        proxy_buffering off;
                    }
                }

            """
        }
        let config = """
            \(user)worker_processes 1;
            master_process off;
            daemon off;
            pid \(directory)/nginx.pid;
            error_log \(directory)/error.log warn;
            events { worker_connections 8192; }
            http {
                access_log off;
                client_body_temp_path \(directory)/tmp/body;
                proxy_temp_path \(directory)/tmp/proxy;
                fastcgi_temp_path \(directory)/tmp/fastcgi;
                uwsgi_temp_path \(directory)/tmp/uwsgi;
                scgi_temp_path \(directory)/tmp/scgi;
                http2_max_concurrent_streams 256;
                keepalive_requests 100000;
            \(server(oauthPort, upstream: oauth))\(server(gatewayPort, upstream: gateway))\(server(mutualTLSPort, upstream: oauth, requiresCertificate: true))}

            """
        let configPath = directory + "/nginx.conf"
        try config.write(toFile: configPath, atomically: true, encoding: .utf8)

        let watcher = """
            import ctypes, signal, subprocess, sys
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            libc = ctypes.CDLL(None)
            child = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL,
                                     preexec_fn=lambda: libc.prctl(1, signal.SIGTERM))
            try:
                while sys.stdin.buffer.read(4096):
                    pass
            finally:
                child.terminate()
                try:
                    child.wait(3)
                except Exception:
                    child.kill()
            """
        let pipe = Pipe()
        _ = fcntl(pipe.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["python3", "-c", watcher, nginx, "-p", directory, "-c", configPath]
        process.standardInput = pipe
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        self.stdinPipe = pipe

        let deadline = Date().addingTimeInterval(15)
        while !([oauthPort, gatewayPort, mutualTLSPort].allSatisfy(LoopbackSockets.accepts)) {
            if !process.isRunning || Date() > deadline {
                let log = (try? String(contentsOfFile: directory + "/error.log", encoding: .utf8)) ?? ""
                throw TestServersError(message: "the TLS front for the OAuth2 servers did not start:\n\(log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        let pins = [try SPKIPin("sha256//" + env.leafPin), try SPKIPin("sha256//" + env.intermediatePin)]
        let security = try SecurityConfiguration.secured(trust: [
            try TrustPolicy(host: "127.0.0.1", pins: pins, pinnedCertificateAuthorities: env.caBundle)
        ])
        return AuthEnvironment(
            oauth: URL(string: "https://127.0.0.1:\(oauthPort)")!,
            gateway: URL(string: "https://127.0.0.1:\(gatewayPort)")!,
            oauthMutualTLS: URL(string: "https://127.0.0.1:\(mutualTLSPort)")!,
            oauthPlain: oauth,
            gatewayPlain: gateway,
            nginxHTTPS: env.nginxHTTPS,
            security: security,
            pins: pins,
            caBundle: env.caBundle
        )
    }
}

/// The authorization server's admin endpoints and introspection, over its plain port (test
/// code only: the admin endpoints take no credentials, and introspection uses the gateway's
/// client in the form body, never an Authorization header).
struct OAuthAdmin: Sendable {
    let environment: AuthEnvironment
    let session: Session

    init(_ environment: AuthEnvironment) {
        self.environment = environment
        self.session = Session(
            configuration: .init(baseURL: environment.oauthPlain),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
    }

    func json(_ method: HTTPRequest.Method, _ path: String, form: [String: String]? = nil) async throws -> [String: Any]
    {
        var request = HTTPRequest(method: method, path: path)
        var body: RequestBody?
        if let form {
            request.headerFields[.contentType] = "application/x-www-form-urlencoded"
            body = .data(OAuth2Form.encode(form.map { ($0.key, $0.value) }))
        }
        let response = try await session.send(request, body: body)
        guard response.isSuccessful,
            let object = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
        else {
            throw TestServersError(message: "\(method) \(path) answered \(response.status)")
        }
        return object
    }

    /// Tokens issued so far by grant type (HTTP 200 token responses).
    func grants() async throws -> [String: Int] {
        (try await json(.get, "/admin/stats")["grants"] as? [String: Int]) ?? [:]
    }

    func stats() async throws -> [String: Any] { try await json(.get, "/admin/stats") }

    /// The grant counts after `body` minus those before.
    func grantDelta(_ body: () async throws -> Void) async throws -> [String: Int] {
        let before = try await grants()
        try await body()
        let after = try await grants()
        var delta: [String: Int] = [:]
        for (grant, count) in after where count != before[grant, default: 0] {
            delta[grant] = count - before[grant, default: 0]
        }
        return delta
    }

    func expireAll() async throws { _ = try await json(.post, "/admin/expire-all") }

    func setLifetime(_ seconds: Int) async throws { _ = try await json(.post, "/admin/lifetime?seconds=\(seconds)") }

    /// What the token endpoint does from now on: `none`, `down` (closes the connection without
    /// answering; the TLS front turns that into 502), `slow` (waits `delayMilliseconds`), `429` or
    /// `503` (with `Retry-After`: `retryAfter` seconds, as a number or, with `asDate`, an
    /// HTTP-date).
    func setTokenFault(
        _ mode: String,
        retryAfter: Int? = nil,
        asDate: Bool = false,
        delayMilliseconds: Int? = nil
    ) async throws {
        var query = "mode=\(mode)"
        if let retryAfter { query += "&retry_after=\(retryAfter)&retry_after_form=\(asDate ? "date" : "seconds")" }
        if let delayMilliseconds { query += "&delay_ms=\(delayMilliseconds)" }
        _ = try await json(.post, "/admin/token-fault?\(query)")
    }

    /// Every token request the server saw (answered, refused or faulted).
    func tokenRequests() async throws -> Int { (try await stats()["token_requests"] as? Int) ?? 0 }

    /// When the server saw each token request after `since` (its own clock, seconds since
    /// 1970), oldest first, and the server's time now.
    func tokenRequestTimes(since: Double = 0) async throws -> (times: [Double], now: Double) {
        let answer = try await json(.get, "/admin/token-requests")
        let times = (answer["times"] as? [Double]) ?? []
        return (times.filter { $0 > since }, answer["now"] as? Double ?? 0)
    }

    /// The private_key_jwt clients' keys, made by the server at its start: by client id
    /// (`courier-jwt-rs256`, `courier-jwt-es256`), each with `alg`, `kid`, `private_pem`
    /// (PKCS#8) and `private_pem_legacy` (PKCS#1 for RSA, SEC 1 for EC).
    func clientKeys() async throws -> [String: [String: Any]] {
        try await json(.get, "/admin/client-keys") as? [String: [String: Any]] ?? [:]
    }

    /// What the metadata documents say from now on: another `issuer`, endpoints on another
    /// origin, a `Cache-Control: max-age`, no RFC 8414 document (404), mutual-TLS endpoint
    /// aliases on another origin. No argument: the truth.
    func setMetadata(
        issuer: String? = nil,
        endpointOrigin: String? = nil,
        maxAge: Int? = nil,
        oauthMetadata: Bool = true,
        mutualTLSOrigin: String? = nil
    ) async throws {
        var form: [String: String] = ["oauth_metadata": oauthMetadata ? "on" : "off"]
        if let issuer { form["issuer"] = issuer }
        if let mutualTLSOrigin { form["mtls_origin"] = mutualTLSOrigin }
        if let endpointOrigin { form["endpoint_origin"] = endpointOrigin }
        if let maxAge { form["max_age"] = String(maxAge) }
        _ = try await json(.post, "/admin/metadata", form: form)
    }

    /// How many times the metadata documents were fetched, by path.
    func metadataRequests() async throws -> [String: Int] {
        (try await stats()["metadata_requests_by_path"] as? [String: Int]) ?? [:]
    }

    /// RFC 7662 introspection as the gateway client (which may introspect any token).
    func isActive(_ token: String) async throws -> Bool {
        let answer = try await json(
            .post,
            "/oauth/introspect",
            form: ["token": token, "client_id": "gateway", "client_secret": "gateway-secret"]
        )
        return answer["active"] as? Bool ?? false
    }
}
