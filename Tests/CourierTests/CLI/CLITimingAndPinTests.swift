#if CommandLine
import Courier
import Foundation
import Testing

/// `-w`/`--timing`, and `courier pin` against the suite's chain.
@Suite(.timeLimit(.minutes(1)))
struct CLITimingAndPinTests {
    @Test func timingJSONHasEveryField() async throws {
        let env = try await TestServers.shared()
        let outcome = try await CLIProcess.run([
            "get", env.url(.https, "/bytes/1k").absoluteString, "--cacert", env.caBundle, "--timing=json", "-o",
            "/dev/null",
        ])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.errorLines.count == 1)
        let object = try #require(
            JSONSerialization.jsonObject(with: Data(outcome.standardError.utf8)) as? [String: Any]
        )
        for key in ["dns_ms", "connect_ms", "tls_ms", "first_byte_ms", "transfer_ms", "total_ms"] {
            let value = try #require(object[key] as? Double, "\(key) in \(object)")
            #expect(value >= 0)
        }
        #expect(object["connection_reused"] as? Bool == false)
        #expect(object["http_version"] as? String == "HTTP/2")
        #expect(object["redirects"] as? Int == 0)
        #expect(object["bytes_received"] as? Int == 1024)
        let tls = try #require(object["tls_ms"] as? Double)
        let total = try #require(object["total_ms"] as? Double)
        #expect(tls > 0 && tls <= total)
    }

    @Test func timingTableIsAligned() async throws {
        let env = try await TestServers.shared()
        let outcome = try await CLIProcess.run(["get", "-w", env.url(.http, "/bytes/0").absoluteString])
        #expect(outcome.status == 0, "\(outcome)")
        let names = outcome.errorLines.map { String($0.prefix { $0 != " " }) }
        #expect(outcome.errorLines.count == 9, "\(outcome)")
        #expect(Set(outcome.errorLines.map(\.count)).count == 1, "every row as wide: \(outcome.errorLines)")
        #expect(names.first == "dns")
        #expect(outcome.standardError.contains("reused"))
        #expect(outcome.standardError.contains("HTTP/1.1"))
    }

    @Test func pinPrintsTheVerifiedChainWithTheLibrarysPins() async throws {
        let env = try await TestServers.shared()
        let outcome = try await CLIProcess.run(["pin", env.url(.https).absoluteString, "--cacert", env.caBundle])
        #expect(outcome.status == 0, "\(outcome)")
        let chainPins = try SPKIPin.pins(fromCertificateFile: env.leafChain).map(\.description)
        let rootPin = try SPKIPin(certificateFile: env.caBundle).description
        let printed = outcome.output.split(separator: "\n").filter { $0.contains("pin      ") }.map {
            String($0.split(separator: " ").last ?? "")
        }
        #expect(printed == chainPins + [rootPin])
        #expect(printed == ["sha256//" + env.leafPin, "sha256//" + env.intermediatePin, "sha256//" + env.rootPin])
        let lines = outcome.output.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("[1]") && $0.hasSuffix("<- pin this") })
        #expect(lines.contains { $0.hasPrefix("[2]") && $0.hasSuffix("<- backup pin") })
        #expect(outcome.output.contains("expires"))
    }

    @Test func pinSwiftIsAWorkingTrustPolicy() async throws {
        let env = try await TestServers.shared()
        let url = env.url(.https)
        let port = try #require(URLComponents(url: url, resolvingAgainstBaseURL: false)?.port)
        let outcome = try await CLIProcess.run(["pin", url.absoluteString, "--cacert", env.caBundle, "--swift"])
        #expect(outcome.status == 0, "\(outcome)")
        let swift = outcome.output
        #expect(swift.hasPrefix("try TrustPolicy(\n"))
        #expect(swift.contains("    host: \"127.0.0.1\",\n"))
        #expect(swift.contains("    port: \(port),\n"))
        #expect(swift.contains("try SPKIPin(\"sha256//\(env.intermediatePin)\"),"))
        #expect(swift.contains("try SPKIPin(\"sha256//\(env.rootPin)\"),"))
        // It type-checks against the real Courier module.
        try await CLISwiftCheck.typecheck("let policy = " + swift)
        // And the pins it holds let a request through.
        let pinned = try await CLIProcess.run([
            "get", env.url(.https, "/bytes/0").absoluteString, "--cacert", env.caBundle,
            "--pin", "sha256//" + env.intermediatePin, "--pin", "sha256//" + env.rootPin,
        ])
        #expect(pinned.status == 0, "\(pinned)")
    }

    @Test func pinRefusesAnUnverifiedChain() async throws {
        let env = try await TestServers.shared()
        let untrusted = try await CLIProcess.run(["pin", env.url(.attacker).absoluteString, "--cacert", env.caBundle])
        #expect(untrusted.status == 60, "\(untrusted)")
        #expect(untrusted.errorLines.count == 1)
        let insecure = try await CLIProcess.run(["pin", "-k", env.url(.attacker).absoluteString])
        #expect(insecure.status == 2, "\(insecure)")
        #expect(insecure.standardError.contains("--cacert"))
    }
}
#endif
