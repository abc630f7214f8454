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

    @Test func eventsOptionsMakeTheStreamsRequestAndConfiguration() throws {
        let command = try CourierCommandLine.parse([
            "events", "https://example.com/chat", "-d", #"{"prompt":"hi"}"#, "--json", "-H", "X-A: 1",
            "-H", "Authorization: Bearer T", "--last-event-id", "41", "--idle-timeout", "0", "--no-reconnect",
            "--retry-delay", "0.5", "--max-failures", "2", "--max-event-size", "4096", "--max-events", "3",
            "--format", "json", "--http1.1",
        ])
        let events = try #require(command as? EventsCommand)
        let plan = try EventsPlan(command: events, standardInput: { Data() })
        #expect(plan.request.method == .post)
        #expect(plan.request.body?.contentType == "application/json")
        #expect(plan.request.headerFields[HTTPField.Name("X-A")!] == "1")
        #expect(plan.request.headerFields[HTTPField.Name("Last-Event-ID")!] == "41")
        // A resource request may not carry Authorization: the command's middleware sets it.
        #expect(plan.request.headerFields[.authorization] == nil)
        #expect(plan.session.middlewares.contains { $0 is OperatorHeaderMiddleware })
        #expect(plan.events.idleTimeout == nil)
        #expect(plan.events.reconnects == false)
        #expect(plan.events.reconnectionDelay == .milliseconds(500))
        #expect(plan.events.maximumConsecutiveFailures == 2)
        #expect(plan.events.maximumEventBytes == 4096)
        #expect(plan.transport.allowsHTTP2 == false)
        #expect(events.format == .json && events.maximumEvents == 3)

        let plain = try #require(try CourierCommandLine.parse(["events", "example.com/feed"]) as? EventsCommand)
        let get = try EventsPlan(command: plain, standardInput: { Data() })
        #expect(get.request.method == .get && get.request.body == nil)
        #expect(get.events.idleTimeout == .seconds(120) && get.events.reconnects)
        #expect(throws: (any Error).self) {
            try CourierCommandLine.parse(["events", "example.com", "--max-events", "0"])
        }
        #expect(throws: (any Error).self) { try CourierCommandLine.parse(["events", "example.com", "--json"]) }
    }

    @Test func eventLinesKeepOneEventOnOneLine() {
        let event = ServerSentEvent(type: "a\tb", data: "line 1\nline\t2\\n\r", id: "7", retry: .milliseconds(1500))
        #expect(EventFormat.text.line(for: event) == #"a\tb"# + "\t" + #"line 1\nline\t2\\n\r"# + "\n")
        #expect(
            EventFormat.json.line(for: event)
                == #"{"data":"line 1\nline\t2\\n\r","id":"7","retry_ms":1500,"type":"a\tb"}"# + "\n"
        )
        #expect(
            EventFormat.json.line(for: ServerSentEvent(data: "x/y"))
                == #"{"data":"x/y","id":null,"retry_ms":null,"type":"message"}"# + "\n"
        )
        #expect(EventFormat.text.line(for: ServerSentEvent(data: "")) == "message\t\n")
    }

    @Test func exitCodesFollowTheErrorKind() {
        #expect(ExitStatus.code(for: CourierError(.couldNotConnect)) == 7)
        #expect(ExitStatus.code(for: CourierError(.connectTimedOut)) == 28)
        #expect(ExitStatus.code(for: CourierError(.pinMismatch)) == 90)
        #expect(ExitStatus.code(for: CourierError(.tlsFailure)) == 35)
        #expect(ExitStatus.code(for: CourierError(.invalidURL)) == 2)
        #expect(ExitStatus.code(for: CourierError(.grantRejected)) == 1)
        #expect(ExitStatus.code(for: CourierError(.clientError)) == 1)
        #expect(ExitStatus.code(for: CourierError(.clientError), statusFails: true) == 22)
        #expect(ExitStatus.code(for: CourierError(.serverError), statusFails: true) == 22)
        #expect(ExitStatus.code(for: CourierError(.unexpectedStatus), statusFails: true) == 1)
    }
}
#endif
