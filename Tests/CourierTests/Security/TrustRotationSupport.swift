import Foundation
import HTTPTypes
import MetricsTestKit
import Testing

@testable import Courier

/// What the trust rotation and pin audit tests share: transports, client certificates made
/// on the spot, and the nginx connections that served a marked set of requests.
enum TrustRotationSupport {
    /// A secured transport that trusts the suite's root as its CA store.
    static func transport(
        _ env: TestEnvironment,
        _ security: SecurityConfiguration,
        allowsHTTP2: Bool = true,
        connectionsPerHost: Int = 8,
        metrics: TestMetrics? = nil
    ) -> CurlTransport {
        var configuration = CurlTransport.Configuration(
            maximumConnectionsPerHost: connectionsPerHost,
            proxy: .none,
            trustedCertificateBundlePath: env.caBundle,
            allowsHTTP2: allowsHTTP2,
            security: security
        )
        configuration.metricsFactory = metrics
        return CurlTransport(configuration: configuration)
    }

    /// A new client certificate from the `mtls` server's client CA, valid for `days` days,
    /// with common name `name`.
    static func clientCertificate(_ env: TestEnvironment, name: String, days: Int) throws -> ClientCertificate {
        let pki = (env.clientCA as NSString).deletingLastPathComponent
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-rotation-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let key = directory + "/client.key"
        let request = directory + "/client.csr"
        let certificate = directory + "/client.pem"
        try SecuritySupport.run(
            "/usr/bin/openssl",
            [
                "req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes", "-keyout", key,
                "-subj", "/O=Courier Tests/CN=\(name)", "-out", request,
            ]
        )
        try SecuritySupport.run(
            "/usr/bin/openssl",
            [
                "x509", "-req", "-in", request, "-out", certificate, "-days", String(days), "-sha256",
                "-CA", pki + "/client-ca.pem", "-CAkey", pki + "/client-ca.key", "-extfile", pki + "/client.ext",
            ]
        )
        return ClientCertificate(certificateFile: certificate, privateKeyFile: key)
    }

    /// Waits (up to 10 s) until `server` logged `count` requests whose URI contains `marker`,
    /// and returns them.
    static func logEntries(
        _ env: TestEnvironment,
        _ server: NginxServer,
        containing marker: String,
        count: Int
    ) async throws -> [AccessLogEntry] {
        for _ in 0..<200 {
            let entries = try SecuritySupport.logEntries(env, server, containing: marker)
            if entries.count >= count { return entries }
            try await Task.sleep(for: .milliseconds(50))
        }
        return try SecuritySupport.logEntries(env, server, containing: marker)
    }

    /// Waits (up to 20 s) until the transport has taken in `count` requests: those it
    /// finished (`finished`, read first) and those it holds. A request takes its trust when it
    /// enters the transport, before the transport counts it, so by then all of them have.
    static func waitUntilTakenIn(_ transport: CurlTransport, count: Int, finished: Locked<Int>) async throws {
        for _ in 0..<2000 {
            let done = finished.value
            let statistics = transport.statistics
            if done + statistics.activeTransfers + statistics.queuedTransfers >= count { return }
            try await Task.sleep(for: .milliseconds(10))
        }
        Issue.record("the transport never took in \(count) requests")
    }
}
