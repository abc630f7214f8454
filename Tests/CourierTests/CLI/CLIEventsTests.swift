#if CommandLine
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// `courier events` run as a process against the server-sent events server (sse-starlette):
/// what it prints, how it reconnects, how it ends and how it exits.
@Suite(.timeLimit(.minutes(1)))
struct CLIEventsTests {
    /// One `--format json` line.
    private struct JSONEvent: Decodable, Equatable {
        let type: String
        let data: String
        let id: String?
        let retryMilliseconds: Int?

        private enum CodingKeys: String, CodingKey {
            case type, data, id
            case retryMilliseconds = "retry_ms"
        }
    }

    /// A key of its own for each test, so that the server's counters are the test's alone.
    private static func key() -> String { "cli-\(UUID().uuidString)" }

    @Test func printsEachEventOnOneLineInOrderAndEndsWithTheStreamsNoContent() async throws {
        let env = try await TestServers.shared()
        let key = Self.key()
        // Two data lines per event: the line feed between them is written as \n.
        let url = env.sseURL("/events?count=5&lines=2&key=\(key)").absoluteString
        let outcome = try await CLIProcess.run(["events", url, "--retry-delay", "0"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output == (1...5).map { "tick\t\($0):1\\n\($0):2\n" }.joined())
        #expect(outcome.standardError.isEmpty)
        // After the fifth event the stream reconnected once, resumed after 5 and got a 204.
        let stats = try await env.sseStats(key: key)
        #expect(stats.lastEventIDs == [nil, "5"])
        #expect(stats.noContent == 1)
    }

    @Test func jsonFormatPrintsOneObjectPerEventWithSortedKeys() async throws {
        let env = try await TestServers.shared()
        let url = env.sseURL("/events?count=3&retry=40&key=\(Self.key())").absoluteString
        let outcome = try await CLIProcess.run(["events", url, "--format", "json", "--no-reconnect"])
        #expect(outcome.status == 0, "\(outcome)")
        let lines = outcome.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(outcome)")
        let events = try lines.map { try JSONDecoder().decode(JSONEvent.self, from: Data($0.utf8)) }
        #expect(events.map(\.id) == ["1", "2", "3"])
        #expect(events.map(\.data) == ["1:", "2:", "3:"])
        #expect(events.allSatisfy { $0.type == "tick" && $0.retryMilliseconds == nil })
        #expect(lines.first == #"{"data":"1:","id":"1","retry_ms":null,"type":"tick"}"#)
    }

    @Test func aDroppedConnectionReconnectsWithNoGapAndNoDuplicate() async throws {
        let env = try await TestServers.shared()
        let key = Self.key()
        // The server drops the connection after every two events and asks for a 50 ms retry.
        let url = env.sseURL("/events?count=7&drop_every=2&retry=50&key=\(key)").absoluteString
        let outcome = try await CLIProcess.run(["events", url, "--format", "json"])
        #expect(outcome.status == 0, "\(outcome)")
        let lines = outcome.output.split(separator: "\n").map(String.init)
        let events = try lines.map { try JSONDecoder().decode(JSONEvent.self, from: Data($0.utf8)) }
        #expect(events.map(\.id) == (1...7).map(String.init), "\(outcome)")
        let stats = try await env.sseStats(key: key)
        #expect(stats.drops == 3)
        #expect(stats.lastEventIDs == [nil, "2", "4", "6", "7"])
    }

    @Test func lastEventIDResumesTheFirstConnection() async throws {
        let env = try await TestServers.shared()
        let key = Self.key()
        let url = env.sseURL("/events?count=5&key=\(key)").absoluteString
        let outcome = try await CLIProcess.run(["events", url, "--last-event-id", "3", "--no-reconnect"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output == "tick\t4:\ntick\t5:\n")
        #expect(try await env.sseStats(key: key).lastEventIDs == ["3"])
    }

    @Test func maxEventsStopsCleanlyAndClosesTheStream() async throws {
        let env = try await TestServers.shared()
        let key = Self.key()
        // 1,000 events a second apart: only --max-events ends this run.
        let url = env.sseURL("/events?count=1000&interval=1000&key=\(key)").absoluteString
        let outcome = try await CLIProcess.run(["events", url, "--max-events", "2"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output == "tick\t1:\ntick\t2:\n")
        #expect(try await Self.streamClosed(env: env, key: key))
    }

    @Test func noContentEndsWithSuccessAndNothingPrinted() async throws {
        let env = try await TestServers.shared()
        let outcome = try await CLIProcess.run(["events", env.sseURL("/nocontent").absoluteString])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output.isEmpty)
    }

    @Test func aBodyThatIsNotAnEventStreamOrAnErrorStatusFails() async throws {
        let env = try await TestServers.shared()
        let notSSE = try await CLIProcess.run(["events", env.sseURL("/notsse").absoluteString])
        #expect(notSSE.status == 1, "\(notSSE)")
        #expect(notSSE.output.isEmpty)
        #expect(notSSE.errorLines.count == 1, "\(notSSE)")
        #expect(notSSE.standardError.contains("not an event stream (text/event-stream)"))

        let missing = try await CLIProcess.run(["events", env.sseURL("/status?code=404").absoluteString])
        #expect(missing.status == 22, "\(missing)")
        #expect(missing.standardError.contains("404"))
        let unavailable = try await CLIProcess.run(["events", env.sseURL("/status?code=503").absoluteString])
        #expect(unavailable.status == 22, "\(unavailable)")
    }

    @Test func anEventOverTheSizeLimitFails() async throws {
        let env = try await TestServers.shared()
        let url = env.sseURL("/events?count=3&size=4096&key=\(Self.key())").absoluteString
        let outcome = try await CLIProcess.run(["events", url, "--max-event-size", "1024"])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.output.isEmpty)
        #expect(outcome.errorLines.count == 1, "\(outcome)")
    }

    @Test func postingAPromptPrintsTheDeltasAndDoesNotReconnect() async throws {
        let env = try await TestServers.shared()
        let key = Self.key()
        let outcome = try await CLIProcess.run([
            "events", env.sseURL("/chat?key=\(key)").absoluteString, "--json", "-d", #"{"prompt":"hello","tokens":3}"#,
            "-H", "Authorization: Bearer SECRET-CHAT-TOKEN", "-v",
        ])
        #expect(outcome.status == 0, "\(outcome)")
        let expected = ["w1 ", "w2 ", "w3 "].map { "message\t{\"delta\":\"\($0)\"}\n" }.joined() + "message\t[DONE]\n"
        #expect(outcome.output == expected)
        #expect(outcome.standardError.contains("POST"))
        #expect(!outcome.standardError.contains("SECRET-CHAT-TOKEN"))
        let stats = try await env.sseStats(key: key)
        #expect(stats.chatPrompts == ["hello"])
    }

    @Test func interruptExitsWith130AndClosesTheConnection() async throws {
        let env = try await TestServers.shared()
        let key = Self.key()
        let url = env.sseURL("/events?count=1000&interval=1000&key=\(key)").absoluteString
        let running = try RunningCommand(["events", url])
        defer { running.kill() }
        // The first event arrives while the stream is still open: it was flushed at once.
        let firstLine = try await running.waitForOutput(containing: "tick\t1:\n")
        #expect(firstLine, "no event printed; stderr: \(running.standardError)")
        running.interrupt()
        let status = await running.exitStatus()
        #expect(status == 130, "stderr: \(running.standardError)")
        #expect(running.standardError.isEmpty)
        #expect(try await Self.streamClosed(env: env, key: key))
    }

    /// Whether the server saw the stream of `key` closed by its client, within 10 seconds.
    private static func streamClosed(env: TestEnvironment, key: String) async throws -> Bool {
        for _ in 0..<200 {
            let stats = try await env.sseStats(key: key)
            if stats.open == 0 && stats.clientGone == 1 { return true }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }
}

/// A `courier` process that runs until it is told to stop: its stdout and stderr in files.
private final class RunningCommand {
    private let process: Process
    private let directory: URL
    private let status: Task<Int32, Never>

    init(_ arguments: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("courier-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let out = directory.appendingPathComponent("stdout")
        let err = directory.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: out.path, contents: nil)
        _ = FileManager.default.createFile(atPath: err.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try CLIProcess.path())
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        for name in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"] {
            environment[name] = nil
        }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        let (exits, continuation) = AsyncStream.makeStream(of: Int32.self)
        process.terminationHandler = { process in
            continuation.yield(process.terminationStatus)
            continuation.finish()
        }
        try process.run()
        self.process = process
        status = Task {
            for await status in exits { return status }
            return -1
        }
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    var standardOutput: String {
        String(decoding: (try? Data(contentsOf: directory.appendingPathComponent("stdout"))) ?? Data(), as: UTF8.self)
    }

    var standardError: String {
        String(decoding: (try? Data(contentsOf: directory.appendingPathComponent("stderr"))) ?? Data(), as: UTF8.self)
    }

    /// Waits, up to 20 seconds, until stdout holds `text`.
    func waitForOutput(containing text: String) async throws -> Bool {
        for _ in 0..<400 {
            if standardOutput.contains(text) { return true }
            if !process.isRunning { return false }
            try await Task.sleep(for: .milliseconds(50))
        }
        return false
    }

    /// Sends SIGINT, as Ctrl-C in a terminal does.
    func interrupt() { Glibc.kill(process.processIdentifier, SIGINT) }

    /// Kills the process if it still runs.
    func kill() { if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) } }

    /// The exit status, once the process has exited.
    func exitStatus() async -> Int32 { await status.value }
}
#endif
