import ArgumentParser
import Foundation

#if canImport(Glibc)
import Glibc
#endif

@main
struct LoadHarness: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "LoadHarness",
        abstract:
            "Courier's load benchmark: Courier, AsyncHTTPClient, URLSession and a C libcurl floor against one local nginx.",
        subcommands: [Run.self, Serve.self],
        defaultSubcommand: Run.self
    )
}

/// Where the harness finds its clients and writes its results.
struct Locations: ParsableArguments {
    @Option(help: "The folder holding the built client executables (default: this executable's folder).")
    var binDir: String?

    @Option(help: "The Benchmarks package folder (default: the current folder).")
    var packageDir: String = FileManager.default.currentDirectoryPath

    @Option(help: "The CPU nginx is pinned to.")
    var serverCPU: Int = 0

    @Option(help: "The CPU every client process is pinned to.")
    var clientCPU: Int = 1

    @Option(
        help:
            "How nginx and the clients are scheduled against other work on the machine: fifo (SCHED_FIFO, default as root), nice (nice -20) or none."
    )
    var scheduler: String?

    var schedulerChoice: Scheduler {
        get throws {
            guard let scheduler else { return geteuid() == 0 ? .fifo : .none }
            guard let choice = Scheduler(rawValue: scheduler) else {
                throw ValidationError("unknown scheduler \(scheduler)")
            }
            return choice
        }
    }

    @Option(help: "Requests per second the /slow/ location releases (nginx limit_req).")
    var slowRate: Int = 2000

    var binDirectory: URL {
        if let binDir { return URL(fileURLWithPath: binDir) }
        return URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
    }

    func makeWorkDirectory() throws -> URL {
        var template = Array("/tmp/courier-bench-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw HarnessError("mkdtemp failed")
        }
        return URL(fileURLWithPath: String(cString: made))
    }
}

struct Run: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the matrix and the memory run; write RESULTS.md.")

    @OptionGroup var locations: Locations

    @Flag(help: "Full mode: 5 s runs, 3 rounds (about 40 minutes). The default is quick mode (about 4 minutes).")
    var full = false

    @Option(help: "Rounds over the whole matrix; each cell reports the round with the median req/s.")
    var rounds: Int?

    @Option(help: "Seconds each measured run may last at most.")
    var seconds: Double?

    @Option(help: "Requests each measured 1 KiB run may send at most.")
    var smallRequests: Int?

    @Option(help: "Requests each measured 1 MiB run may send at most.")
    var largeRequests: Int?

    @Option(
        help:
            "Clients, comma-separated: courier,courier-executor,courier-metrics,courier-stream,courier-access,courier-dpop,ahc,urlsession,curl,curl-buffered,curl-courier-options,swift-loop,swift-loop-send."
    )
    var clients =
        "courier,courier-executor,courier-stream,ahc,urlsession,curl,curl-courier-options,swift-loop,swift-loop-send"

    @Option(
        help:
            "Protocols, comma-separated: h1 (HTTP/1.1 plain), h1s (HTTP/1.1 over TLS; courier, courier-access and courier-dpop only), h2 (HTTP/2 over TLS)."
    )
    var protocols = "h1,h2"

    @Option(help: "Body sizes, comma-separated: 1k, 1m, sse (an event stream, for the SSE clients only).")
    var sizes = "1k,1m"

    @Option(help: "Concurrency levels, comma-separated.")
    var concurrency = "1,16,64,256"

    @Flag(help: "Skip the memory run (10,000 requests in flight).")
    var skipMemory = false

    @Flag(help: "Only the memory run.")
    var memoryOnly = false

    @Option(help: "Requests in flight at once in the memory run.")
    var memoryRequests = 10_000

    @Option(help: "Connections the clients may open in the memory run.")
    var memoryConnections = 16

    @Flag(help: "Do not give URLSession the test CA through a private mount namespace; skip its HTTPS runs.")
    var noURLSessionCAMount = false

    @Option(help: "Where to write the Markdown report (default: <package-dir>/RESULTS.md).")
    var output: String?

    @Option(help: "The command line to record in the report.")
    var invocation: String?

    @Option(help: "The report's title.")
    var title = "Courier load benchmark results"

    func run() throws {
        let selected = clients.split(separator: ",").map(String.init)
        let chosen = Client.all.filter { selected.contains($0.name) }
        guard !chosen.isEmpty else { throw ValidationError("no known client in --clients") }
        let protos = try protocols.split(separator: ",").map { name -> Protocol in
            guard let proto = Protocol(rawValue: String(name)) else {
                throw ValidationError("unknown protocol \(name)")
            }
            return proto
        }
        let bodySizes = try sizes.split(separator: ",").map { name -> BodySize in
            guard let size = BodySize(rawValue: String(name)) else { throw ValidationError("unknown size \(name)") }
            return size
        }
        let levels = concurrency.split(separator: ",").compactMap { Int($0) }
        let rounds = self.rounds ?? (full ? 3 : 1)
        let seconds = self.seconds ?? (full ? 5 : 1.5)
        let smallRequests = self.smallRequests ?? (full ? 1_000_000 : 100_000)
        let largeRequests = self.largeRequests ?? (full ? 100_000 : 10_000)
        let warmupSeconds = full ? 1.0 : 0.5

        let work = try locations.makeWorkDirectory()
        let server = try TestServer(
            directory: work,
            slowRate: locations.slowRate,
            serverCPU: locations.serverCPU,
            scheduler: try locations.schedulerChoice
        )
        log(
            "work directory \(work.path); starting nginx (CPU \(locations.serverCPU)) on \(server.http1Origin) and \(server.tlsOrigin)"
        )
        try server.start()
        defer { server.stop() }
        let runner = ClientRunner(
            binDirectory: locations.binDirectory,
            workDirectory: work,
            clientCPU: locations.clientCPU,
            caFile: server.caFile,
            urlSessionCAMount: !noURLSessionCAMount,
            scheduler: try locations.schedulerChoice
        )
        let loadBefore = shellOr("cut -d' ' -f1-3 /proc/loadavg")
        let started = Date()

        var results: [RunResult] = []
        var cells: [Cell] = []
        if !memoryOnly {
            for proto in protos {
                for size in bodySizes {
                    for level in levels { cells.append(Cell(proto: proto, size: size, concurrency: level)) }
                }
            }
            var plan: [(Cell, Client, Int)] = []
            for round in 0..<rounds {
                for (index, cell) in cells.enumerated() {
                    var inCell = chosen.filter { $0.runs(in: cell.size) && $0.runs(over: cell.proto) }
                    if cell.proto.usesTLS && noURLSessionCAMount { inCell.removeAll { $0.name == "urlsession" } }
                    // Interleave: each cell starts with a different client, round after round.
                    let shift = (index + round) % max(inCell.count, 1)
                    inCell = Array(inCell[shift...] + inCell[..<shift])
                    plan += inCell.map { (cell, $0, round) }
                }
            }
            for (number, (cell, client, round)) in plan.enumerated() {
                let origin = cell.proto.usesTLS ? server.tlsOrigin : server.http1Origin
                let small = cell.size == .small
                let events = cell.size == .events
                let budget = Budget(
                    requests: small ? smallRequests : largeRequests,
                    seconds: seconds,
                    warmupRequests: max(2 * cell.concurrency, small ? 500 : events ? 10 : 50),
                    warmupSeconds: warmupSeconds
                )
                var result = runner.run(
                    client,
                    url: "\(origin)\(cell.size.path)",
                    https: cell.proto.usesTLS,
                    http1Only: cell.proto == .http1TLS,
                    concurrency: cell.concurrency,
                    connections: cell.concurrency,
                    expectBytes: cell.size.bytes,
                    expectEvents: events ? EventStreamFile.count : nil,
                    budget: budget
                )
                result.cell = cell
                result.round = round
                results.append(result)
                log(
                    "[\(number + 1)/\(plan.count)] \(cell.proto.rawValue) \(cell.size.rawValue) c\(cell.concurrency) \(summary(result))"
                )
            }
        }

        var memory: [RunResult] = []
        if !skipMemory {
            let memoryClients = chosen.filter {
                !$0.largeBodiesOnly && !$0.eventsOnly && !$0.needsTLS && $0.name != "courier-executor"
                    && $0.name != "courier-metrics"
                    && $0.name != "curl-courier-options"
                    && !$0.name.hasPrefix("swift-loop")
            }
            for client in memoryClients {
                let budget = Budget(requests: memoryRequests, seconds: 120, warmupRequests: 0, warmupSeconds: 0)
                let result = runner.run(
                    client,
                    url: "\(server.http1Origin)/slow/1k",
                    https: false,
                    concurrency: memoryRequests,
                    connections: memoryConnections,
                    expectBytes: 1024,
                    budget: budget
                )
                memory.append(result)
                log("[memory] \(summary(result))")
            }
        }

        let report = Report(
            title: title,
            cells: cells,
            results: results,
            memory: memory,
            rounds: rounds,
            budgetText:
                "warm-up \(warmupSeconds) s (or max(2×concurrency, 500|50) requests), then at most \(seconds) s or \(smallRequests) (1 KiB) / \(largeRequests) (1 MiB) requests; \(rounds) round(s), median by req/s",
            memoryText:
                "\(memoryRequests) requests started at once against /slow/1k (nginx limit_req \(locations.slowRate) r/s), HTTP/1.1, at most \(memoryConnections) connections",
            urlSessionCAMount: !noURLSessionCAMount,
            invocation: invocation ?? CommandLine.arguments.joined(separator: " "),
            packageDirectory: URL(fileURLWithPath: locations.packageDir),
            elapsed: Date().timeIntervalSince(started),
            serverCPU: locations.serverCPU,
            clientCPU: locations.clientCPU,
            scheduler: try locations.schedulerChoice,
            loadAverages: (loadBefore, shellOr("cut -d' ' -f1-3 /proc/loadavg"))
        )
        let markdown = report.markdown()
        print(markdown)
        let outputPath = output ?? URL(fileURLWithPath: locations.packageDir).appendingPathComponent("RESULTS.md").path
        try markdown.write(toFile: outputPath, atomically: true, encoding: .utf8)
        log("wrote \(outputPath); raw client output in \(work.path)")
    }

    private func summary(_ r: RunResult) -> String {
        if let failure = r.failure { return "\(r.client): FAILED \(failure)" }
        let events =
            r.events > 0 ? "\(fmt(r.eventsPerSecond, 0)) events/s, \(fmt(r.cpuMicrosPerEvent, 2)) µs CPU/event, " : ""
        return "\(r.client): \(events)\(fmt(r.requestsPerSecond, 0)) req/s, \(fmt(r.mebibytesPerSecond, 1)) MiB/s, "
            + "\(fmt(r.cpuMicrosPerRequest, 1)) µs CPU/req, p50 \(fmt(r.p50Micros, 0)) µs, RSS \(fmt(r.maxRSSMiB, 1)) MiB, "
            + "\(r.errors) errors, \(r.httpVersion)" + (r.firstError.map { " (first error: \($0.prefix(160)))" } ?? "")
    }
}

/// Starts the server alone and waits, so that a client can be profiled against it by hand.
struct Serve: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Start nginx only, print its URLs, wait (for profiling).")

    @OptionGroup var locations: Locations

    @Option(help: "Seconds to keep the server up.")
    var seconds: Int = 1800

    func run() throws {
        let work = try locations.makeWorkDirectory()
        let server = try TestServer(
            directory: work,
            slowRate: locations.slowRate,
            serverCPU: locations.serverCPU,
            scheduler: try locations.schedulerChoice
        )
        try server.start()
        defer { server.stop() }
        print("HTTP1=\(server.http1Origin)")
        print("TLS=\(server.tlsOrigin)")
        print("CA=\(server.caFile)")
        print("WORK=\(work.path)")
        fflush(nil)
        signal(SIGINT) { _ in stopRequested = 1 }
        signal(SIGTERM) { _ in stopRequested = 1 }
        let deadline = Date().addingTimeInterval(TimeInterval(seconds))
        while stopRequested == 0 && Date() < deadline { usleep(100_000) }
    }
}

nonisolated(unsafe) var stopRequested: sig_atomic_t = 0

func log(_ message: String) {
    FileHandle.standardError.write(Data((message + "\n").utf8))
}

func fmt(_ value: Double, _ digits: Int) -> String {
    guard value.isFinite else { return "–" }
    var text = String(format: "%.\(digits)f", value)
    if digits == 0, let number = Int(text), number >= 10_000 { text = grouped(number) }
    return text
}

func grouped(_ number: Int) -> String {
    let digits = Array(String(number))
    var out = ""
    for (index, digit) in digits.enumerated() {
        if index > 0 && (digits.count - index) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return out
}
