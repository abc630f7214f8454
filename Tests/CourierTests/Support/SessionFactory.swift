import Foundation
import HTTPTypes
import Logging

@testable import Courier

/// Sessions wired to the suite's servers.
enum SessionFactory {
    /// A session whose base URL is `server` and which trusts the suite's test CA.
    static func session(
        _ env: TestEnvironment,
        _ server: NginxServer = .http,
        configure: (inout Session.Configuration) -> Void = { _ in },
        transport: CurlTransport.Configuration? = nil
    ) -> Session {
        var configuration = Session.Configuration(baseURL: env.url(server))
        configure(&configuration)
        var transportConfiguration = transport ?? CurlTransport.Configuration()
        transportConfiguration.trustedCertificateBundlePath = env.caBundle
        transportConfiguration.proxy = .none
        return Session(configuration: configuration, transport: CurlTransport(configuration: transportConfiguration))
    }

    /// A session whose base URL is httpbin itself.
    static func httpbin(_ env: TestEnvironment, configure: (inout Session.Configuration) -> Void = { _ in }) -> Session
    {
        var configuration = Session.Configuration(baseURL: env.httpbin)
        configure(&configuration)
        return Session(configuration: configuration, transport: CurlTransport(configuration: .init(proxy: .none)))
    }
}

/// The resident set size of this process, from /proc/self/status.
func residentMemoryBytes() -> Int {
    guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
    for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
        let digits = line.split(separator: " ").dropFirst().first.flatMap { Int($0) } ?? 0
        return digits * 1024
    }
    return 0
}

/// A log handler that keeps every line, for tests that read what was logged.
final class CapturingLogHandler: LogHandler, Sendable {
    private let lines: LockedBox<[String]>
    private let storedLevel: LockedBox<Logger.Level>

    init() {
        lines = LockedBox([])
        storedLevel = LockedBox(.trace)
    }

    var captured: [String] { lines.withLock { $0 } }

    var logLevel: Logger.Level {
        get { storedLevel.withLock { $0 } }
        set { storedLevel.withLock { $0 = newValue } }
    }

    var metadata: Logger.Metadata {
        get { [:] }
        set {}
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { nil }
        set {}
    }

    func log(event: LogEvent) {
        lines.withLock { $0.append("\(event.level) \(event.message)") }
    }

    func makeLogger() -> Logger {
        Logger(label: "courier.test") { _ in self }
    }
}
