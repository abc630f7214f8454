#if CommandLine
import ArgumentParser
import Courier
import Foundation

/// `courier pin https://host[:port]`: the verified chain with the pin of every key, and which
/// to pin.
struct PinCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pin",
        abstract: "Print a server's verified chain with the SPKI pin of each certificate.",
        discussion: """
            Connects, verifies the chain (against --cacert for a private CA) and prints each \
            certificate, leaf first: subject, issuer, expiry and its sha256// pin. Marks the \
            one to pin and the backup to pin with it. --swift prints a TrustPolicy to paste.
            """
    )

    @Argument(help: "https://host[:port]")
    var url: String

    @Option(name: .customLong("cacert"), help: "A PEM bundle of the CAs to trust instead of the system's.")
    var caBundle: String?

    @Option(name: .customLong("connect-timeout"), help: "The longest connecting may take, in seconds.")
    var connectTimeout: Double = 10

    @Flag(name: .customLong("swift"), help: "Print a TrustPolicy(...) Swift expression instead.")
    var swift = false

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: .hidden)
    var insecure = false

    func validate() throws {
        if insecure { throw TrustInput.insecureRefusal }
    }

    func run() async throws {
        let target = try RequestPlan.url(url.contains("://") ? url : "https://" + url)
        guard target.scheme?.lowercased() == "https", let host = target.host else {
            throw CommandFailure.usage("\(url.debugDescription): courier pin needs an https:// URL")
        }
        try TrustInput.checkBundle(caBundle)
        let port = target.port ?? 443
        let chain = try await ServerCertificate.verifiedChain(
            host: host,
            port: port,
            trustedCertificateBundlePath: caBundle,
            timeout: RequestPlan.duration(connectTimeout)
        )
        let report = PinReport(host: host, port: port, chain: chain)
        StandardOutput.write(swift ? report.swift : report.text(now: Date()))
    }
}
#endif
