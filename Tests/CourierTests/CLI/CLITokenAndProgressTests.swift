#if CommandLine
import Foundation
import Testing

/// `courier token` against the authlib server behind TLS, and the progress bar on a
/// terminal and on a pipe.
@Suite(.timeLimit(.minutes(1)))
struct CLITokenAndProgressTests {
    @Test func tokenWithClientCredentialsIsRedactedUnlessShown() async throws {
        let auth = try await AuthServers.shared()
        let tokenURL = auth.oauth.absoluteString + "/oauth/token"
        let arguments = [
            "token", "--token-url", tokenURL, "--client-id", "courier-device", "--client-credentials",
            "--cacert", auth.caBundle,
        ]
        let secret = ["COURIER_CLIENT_SECRET": "device-secret"]
        let redacted = try await CLIProcess.run(arguments, environment: secret)
        #expect(redacted.status == 0, "\(redacted)")
        #expect(redacted.output.contains("token_type    Bearer"))
        #expect(redacted.output.contains("expires_in    "))
        #expect(redacted.output.contains("access_token  <redacted"))

        let shown = try await CLIProcess.run(arguments + ["--show"], environment: secret)
        #expect(shown.status == 0, "\(shown)")
        let line = try #require(shown.output.split(separator: "\n").first { $0.hasPrefix("access_token") })
        let token = String(line.split(separator: " ").last ?? "")
        #expect(!token.isEmpty && !token.contains("redacted"))
        #expect(try await OAuthAdmin(auth).isActive(token))
        #expect(!redacted.output.contains(token))
    }

    @Test func tokenThroughDiscoveryIsIntrospected() async throws {
        let auth = try await AuthServers.shared()
        let outcome = try await CLIProcess.run(
            [
                "token", "--issuer", auth.oauth.absoluteString, "--client-id", "courier-device", "--scope", "read",
                "--cacert", auth.caBundle, "--introspect",
            ],
            environment: ["COURIER_CLIENT_SECRET": "device-secret"]
        )
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output.contains("scope         read\n"))
        #expect(outcome.output.contains("active        true\n"))
        #expect(outcome.output.contains("client_id     courier-device\n"))
        #expect(!outcome.output.contains("device-secret"))
    }

    @Test func tokenWithAWrongSecretFailsInOneLine() async throws {
        let auth = try await AuthServers.shared()
        let outcome = try await CLIProcess.run(
            [
                "token", "--token-url", auth.oauth.absoluteString + "/oauth/token", "--client-id", "courier-device",
                "--cacert", auth.caBundle,
            ],
            environment: ["COURIER_CLIENT_SECRET": "not-the-secret"]
        )
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.errorLines.count == 1)
        #expect(!outcome.standardError.contains("not-the-secret"))
    }

    @Test func tokenOverPlainHTTPIsRefused() async throws {
        let outcome = try await CLIProcess.run([
            "token", "--token-url", "http://127.0.0.1:1/oauth/token", "--client-id", "x", "--public-client",
        ])
        #expect(outcome.status == 2, "\(outcome)")
        #expect(outcome.errorLines.count == 1)
    }

    @Test func progressBarOnATerminalEndsWithANewline() async throws {
        let env = try await TestServers.shared()
        let url = env.url(.http, "/slow").absoluteString
        let command = "\(try CLIProcess.path()) get \(url) -o /dev/null"
        // script runs the command on a pseudo-terminal and copies what it printed to stdout.
        let terminal = try await CLIProcess.run(
            executable: "/usr/bin/script",
            ["-q", "-e", "-c", command, "/dev/null"]
        )
        #expect(terminal.status == 0, "\(terminal)")
        let printed = terminal.output
        #expect(printed.contains("\r↓ ["), "\(printed.debugDescription)")
        #expect(printed.contains("100% "), "\(printed.debugDescription)")
        #expect(printed.contains("256.0 KiB"))
        // "\r\n" on a terminal, one Character: look at the last byte.
        #expect(printed.utf8.last == UInt8(ascii: "\n"))
    }

    @Test func noProgressBarOnAPipe() async throws {
        let env = try await TestServers.shared()
        let outcome = try await CLIProcess.run(["get", env.url(.http, "/slow").absoluteString, "-o", "/dev/null"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.standardError.isEmpty)
    }
}
#endif
