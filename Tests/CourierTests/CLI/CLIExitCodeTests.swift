#if CommandLine
import Foundation
import Testing

/// The exit codes of `courier`, one kind of failure each, with one line on stderr.
@Suite(.timeLimit(.minutes(1)))
struct CLIExitCodeTests {
    @Test func refusedConnectionExits7() async throws {
        let port = try freePort()
        let outcome = try await CLIProcess.run(["get", "http://127.0.0.1:\(port)/"])
        #expect(outcome.status == 7, "\(outcome)")
        #expect(outcome.errorLines.count == 1)
    }

    @Test func unverifiedCertificatesExit60() async throws {
        let env = try await TestServers.shared()
        // Other suites reach the attacker on purpose: only this request's marker must be absent.
        let marker = SecuritySupport.uniquePath("/bytes/0")
        let attacker = try await CLIProcess.run([
            "get", env.url(.attacker, marker).absoluteString, "--cacert", env.caBundle,
        ])
        #expect(attacker.status == 60, "\(attacker)")
        #expect(attacker.errorLines.count == 1)
        let expired = try await CLIProcess.run([
            "get", env.url(.expired, "/bytes/0").absoluteString, "--cacert", env.caBundle,
        ])
        #expect(expired.status == 60, "\(expired)")
        try await SecuritySupport.expectNeverReached(env, .attacker, marker: marker)
    }

    @Test func aFailedHandshakeExits35() async throws {
        let env = try await TestServers.shared()
        // TLS to a port that speaks plain HTTP.
        let plain = try #require(URLComponents(url: env.url(.http), resolvingAgainstBaseURL: false))
        let outcome = try await CLIProcess.run([
            "get", "https://127.0.0.1:\(plain.port ?? 0)/", "--cacert", env.caBundle,
        ])
        #expect(outcome.status == 35, "\(outcome)")
        #expect(outcome.errorLines.count == 1)
    }

    @Test func pinsDecideAndAMismatchExits90() async throws {
        let env = try await TestServers.shared()
        let url = env.url(.https, "/bytes/1k").absoluteString
        let matching = try await CLIProcess.run([
            "get", url, "--cacert", env.caBundle, "--pin", "sha256//" + env.attackerLeafPin, "--pin",
            "sha256//" + env.intermediatePin,
        ])
        #expect(matching.status == 0, "\(matching)")
        #expect(matching.standardOutput.count == 1024)

        let mismatch = try await CLIProcess.run([
            "get", url, "--cacert", env.caBundle, "--pin", "sha256//" + env.attackerLeafPin,
        ])
        #expect(mismatch.status == 90, "\(mismatch)")
        #expect(mismatch.errorLines.count == 1)
        #expect(mismatch.standardOutput.isEmpty)
    }

    @Test func aTimeoutExits28() async throws {
        let env = try await TestServers.shared()
        let outcome = try await CLIProcess.run([
            "get", "-m", "0.5", env.url(.http, "/stall-headers?seconds=5").absoluteString,
        ])
        #expect(outcome.status == 28, "\(outcome)")
        #expect(outcome.errorLines.count == 1)
    }

    @Test func aPKCS12ClientCertificatePassesMutualTLS() async throws {
        let env = try await TestServers.shared()
        let url = env.url(.mtls, "/bytes/0").absoluteString
        let without = try await CLIProcess.run(["get", "--fail", url, "--cacert", env.caBundle])
        #expect(without.status == 22, "\(without)")
        let with = try await CLIProcess.run(
            ["get", "--fail", url, "--cacert", env.caBundle, "--cert", env.clientPKCS12, "--cert-type", "p12"],
            environment: ["COURIER_CERT_PASSWORD": env.clientPKCS12Password]
        )
        #expect(with.status == 0, "\(with)")
    }
}

/// Bad input ends with exit code 2 and one clear line, and nothing reaches the server.
@Suite(.timeLimit(.minutes(1)))
struct CLIBadInputTests {
    /// Runs `arguments` (with `{url}` replaced by a fault-server URL of a fresh key), expects
    /// exit 2 and one line holding `expected`; then sends one good request with the same key
    /// and checks the server counted exactly that one.
    private func expectRefused(_ arguments: [String], saying expected: String) async throws {
        let env = try await TestServers.shared()
        let key = uniqueFaultKey("cli-bad-input")
        let url = env.faultURL("/status/200?key=\(key)").absoluteString
        let outcome = try await CLIProcess.run(arguments.map { $0 == "{url}" ? url : $0 })
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.errorLines.count == 1, "\(outcome)")
        #expect(outcome.standardError.contains(expected), "\(outcome)")
        #expect(outcome.standardOutput.isEmpty)

        let good = try await CLIProcess.run(["get", url])
        #expect(good.status == 0, "\(good)")
        #expect(try await env.faultStats(forKey: key).requests == 1)
    }

    @Test func aMalformedURL() async throws {
        try await expectRefused(["get", "http://[127.0.0.1/"], saying: "is not an http:// or https:// URL")
        try await expectRefused(["get", "ftp://127.0.0.1/"], saying: "is not an http:// or https:// URL")
    }

    @Test func aMissingDataFile() async throws {
        try await expectRefused(["post", "{url}", "-d", "@/nonexistent/courier-body"], saying: "cannot read")
    }

    @Test func anUnknownOption() async throws {
        try await expectRefused(["get", "{url}", "--no-such-option"], saying: "--no-such-option")
    }

    @Test func insecureIsRefusedWithAPointerToCacert() async throws {
        try await expectRefused(["get", "-k", "{url}"], saying: "--cacert")
        try await expectRefused(["get", "{url}", "--insecure"], saying: "--cacert")
    }

    @Test func aBadHeader() async throws {
        try await expectRefused(["get", "{url}", "-H", "no colon here"], saying: "is not 'Name: value'")
    }
}
#endif
