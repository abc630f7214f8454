#if CommandLine
import Courier
import Foundation
import HTTPTypes
import Testing

@testable import CourierCLI

/// Parsing and the pieces that need no server.
@Suite struct CLIParsingTests {
    @Test func timingSpellingsAreRewritten() {
        #expect(CourierCommandLine.rewrite(["get", "--timing=json", "u"]) == ["get", "--timing-json", "u"])
        #expect(CourierCommandLine.rewrite(["get", "--", "--timing=json"]) == ["get", "--", "--timing=json"])
    }

    @Test func helpIsRecognisedBeforeTheTerminator() {
        #expect(CourierCommandLine.asksForHelp(["help"]))
        #expect(CourierCommandLine.asksForHelp(["get", "--help"]))
        #expect(!CourierCommandLine.asksForHelp(["get", "--", "--help"]))
        #expect(!CourierCommandLine.asksForHelp(["get", "http://h/help"]))
    }

    @Test func requestOptionsParseAsCurlSpellsThem() throws {
        let command = try CourierCommandLine.parse([
            "post", "https://example.com/a?b=1", "-H", "X-A: 1", "-d", "x=1", "-d", "y=2", "-L", "--max-redirs", "3",
            "--http1.1", "-m", "2.5", "--connect-timeout", "1", "-w", "-f", "-i", "-o", "out",
        ])
        let post = try #require(command as? PostCommand)
        let plan = try RequestPlan(method: .post, options: post.options, standardInput: { Data() })
        #expect(plan.request.method == .post)
        #expect(plan.request.headerFields[HTTPField.Name("X-A")!] == "1")
        #expect(plan.request.headerFields[.contentType] == "application/x-www-form-urlencoded")
        #expect(plan.session.maximumRedirects == 3)
        #expect(plan.session.timeout == .milliseconds(2500))
        #expect(plan.session.connectTimeout == .seconds(1))
        #expect(plan.transport.allowsHTTP2 == false)
        #expect(post.options.timing && post.options.fail && post.options.include)
        #expect(post.options.output == "out")
    }

    @Test func aURLWithoutSchemeIsHTTP() throws {
        #expect(try RequestPlan.url("127.0.0.1:8080/x").absoluteString == "http://127.0.0.1:8080/x")
        #expect(throws: CommandFailure.self) { try RequestPlan.url("https://") }
    }

    @Test func pinReportRecommendsTheIssuerWithTheRootAsBackup() throws {
        let pin = try SPKIPin(sha256: [UInt8](repeating: 7, count: 32))
        let certificate = ServerCertificate(subject: "CN=a", issuer: "CN=b", notValidAfter: Date(), pin: pin)
        let three = PinReport(host: "h", port: 443, chain: [certificate, certificate, certificate])
        #expect(three.primary == 1 && three.backup == 2)
        #expect(!three.swift.contains("port:"))
        let two = PinReport(host: "h", port: 8443, chain: [certificate, certificate])
        #expect(two.primary == 1 && two.backup == 0)
        let one = PinReport(host: "h", port: 443, chain: [certificate])
        #expect(one.primary == 0 && one.backup == nil)
        #expect(one.text(now: Date()).contains("spare key"))
    }

    @Test func progressBarDrawsAfterItsDelayAndEndsTheLine() {
        let written = Locked<[String]>([])
        let bar = ProgressBar(delay: .zero) { text in written.withLock { $0.append(text) } }
        bar.update(NetworkTask.Progress(completedBytes: 512, expectedBytes: 1024), direction: .download)
        bar.finish()
        bar.update(NetworkTask.Progress(completedBytes: 1024, expectedBytes: 1024), direction: .download)
        let lines = written.withLock { $0 }
        #expect(lines.count == 2)
        #expect(lines.first?.contains(" 50% 512 B / 1.0 KiB") == true)
        #expect(lines.last?.hasSuffix("\n") == true)

        let quiet = Locked<[String]>([])
        let slow = ProgressBar(delay: .seconds(3600)) { text in quiet.withLock { $0.append(text) } }
        slow.update(NetworkTask.Progress(completedBytes: 1, expectedBytes: nil), direction: .download)
        slow.finish()
        #expect(quiet.withLock { $0 }.isEmpty)
    }

    @Test func exitCodesFollowTheErrorKind() {
        #expect(ExitStatus.code(for: CourierError(.couldNotConnect)) == 7)
        #expect(ExitStatus.code(for: CourierError(.connectTimedOut)) == 28)
        #expect(ExitStatus.code(for: CourierError(.pinMismatch)) == 90)
        #expect(ExitStatus.code(for: CourierError(.tlsFailure)) == 35)
        #expect(ExitStatus.code(for: CourierError(.invalidURL)) == 2)
        #expect(ExitStatus.code(for: CourierError(.grantRejected)) == 1)
    }
}
#endif
