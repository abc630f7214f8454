import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Secured sessions against the suite's nginx blocks, and what the security tests share.
enum SecuritySupport {
    /// A secured session with base URL `server`, trusting `trust`, over its own secured
    /// transport: the session enforces the transport's security.
    ///
    /// - Parameters:
    ///   - caBundle: The transport's CA bundle, standing in for the system store (the suite's
    ///     test root by default; `nil` for the real system store).
    ///   - middlewares: Middleware, outermost first.
    ///   - credentials: A token and cookie attached innermost, as the auth layer would.
    static func session(
        _ env: TestEnvironment,
        _ server: NginxServer = .https,
        trust: [TrustPolicy],
        caBundle: String?? = .none,
        minimumTLSVersion: SecurityConfiguration.TLSVersion = .v1_2,
        allowsHTTP2: Bool = true,
        middlewares: [any Middleware] = [],
        credentials: (token: String, cookie: String)? = nil
    ) throws -> Session {
        let security = try SecurityConfiguration.secured(trust: trust, minimumTLSVersion: minimumTLSVersion)
        var middlewares = middlewares
        if let credentials {
            middlewares.append(
                TestCredentialMiddleware(security: security, token: credentials.token, cookie: credentials.cookie)
            )
        }
        let bundle: String? = caBundle ?? env.caBundle
        let transport = CurlTransport(
            configuration: .init(
                proxy: .none,
                trustedCertificateBundlePath: bundle,
                allowsHTTP2: allowsHTTP2,
                security: security
            )
        )
        return Session(
            configuration: .init(baseURL: env.url(server), middlewares: middlewares),
            transport: transport
        )
    }

    /// Shuts down a session and the transport it was given.
    static func close(_ session: Session) async {
        await session.shutdown()
        await session.transport.shutdown()
    }

    /// A pin from the suite's base64 value.
    static func pin(_ base64: String) throws -> SPKIPin {
        try SPKIPin("sha256//" + base64)
    }

    /// A pin that matches nothing the suite serves.
    static let unrelatedPin: SPKIPin = try! SPKIPin(sha256: [UInt8](repeating: 7, count: 32))

    /// A PEM bundle holding both the suite's root and the attacker's root.
    static func bundleWithAttackerRoot(_ env: TestEnvironment) throws -> String {
        let path = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-security-both-roots-\(UUID().uuidString.prefix(8)).pem").path
        let both =
            try String(contentsOfFile: env.caBundle, encoding: .utf8) + "\n"
            + (try String(contentsOfFile: env.attackerCA, encoding: .utf8))
        try both.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A path no test server sees, so that access-log lines can be attributed to one test.
    static func uniquePath(_ prefix: String = "/httpbin/get") -> String {
        "\(prefix)?security-test=\(UUID().uuidString)"
    }

    /// The access-log entries of `server` whose URI contains `marker`.
    static func logEntries(
        _ env: TestEnvironment,
        _ server: NginxServer,
        containing marker: String
    ) throws -> [AccessLogEntry] {
        try env.accessLog(server).filter { $0.uri.contains(marker) }
    }

    /// Waits (up to 5 s) until `server` logged a request whose URI contains `marker`: nginx
    /// writes the line just after the response, so a client may be a moment ahead of it.
    static func waitForLogEntry(_ env: TestEnvironment, _ server: NginxServer, containing marker: String) async throws {
        for _ in 0..<100 {
            if try !logEntries(env, server, containing: marker).isEmpty { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        Issue.record("\(server) never logged \(marker)")
    }

    /// Expects that `server` never saw a request whose URI contains `marker`.
    ///
    /// A refused request leaves no line, but a line is written a moment after its response:
    /// so this first sends a control request with the curl tool (`-k`: the expired and
    /// wrong-host servers cannot be reached any other way) and waits for its line; nginx
    /// has one worker, so an earlier request would be logged by then.
    static func expectNeverReached(_ env: TestEnvironment, _ server: NginxServer, marker: String) async throws {
        let controlMarker = uniquePath("/bytes/0")
        try run(
            "/usr/bin/curl",
            ["-sk", "-o", "/dev/null", "--noproxy", "*", env.url(server).absoluteString + controlMarker]
        )
        try await waitForLogEntry(env, server, containing: controlMarker)
        #expect(try logEntries(env, server, containing: marker).isEmpty, "\(server) saw \(marker)")
    }

    /// Runs a program to its end and returns its exit status and its standard output and
    /// error together; throws when it exits non-zero unless `allowFailure`.
    @discardableResult
    static func run(
        _ executable: String,
        _ arguments: [String],
        allowFailure: Bool = false
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        if process.terminationStatus != 0 && !allowFailure {
            throw TestServersError(
                message:
                    "\(executable) \(arguments.joined(separator: " ")) exited \(process.terminationStatus): \(output)"
            )
        }
        return (process.terminationStatus, output)
    }

    /// The headers httpbin's `/headers` echoed, by lower-cased name.
    static func echoedHeaders(_ response: Response) throws -> [String: String] {
        struct Echo: Decodable { let headers: [String: String] }
        let echo = try JSONDecoder().decode(Echo.self, from: response.data)
        return Dictionary(echo.headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
    }
}

/// Attaches a bearer token and a cookie, the way the auth layer does: only when the
/// transport's security configuration allows credentials for the request.
struct TestCredentialMiddleware: Middleware {
    let security: SecurityConfiguration
    let token: String
    let cookie: String

    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        try security.checkCredentialTarget(request)
        var request = request
        request.headerFields[.authorization] = "Bearer \(token)"
        request.headerFields[.cookie] = cookie
        return try await next(request, body, context)
    }
}
