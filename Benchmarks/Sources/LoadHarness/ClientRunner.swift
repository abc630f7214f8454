import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A client the harness can run: one executable, maybe in a variant mode.
struct Client: Hashable {
    /// The name in the table: `courier`, `courier-stream`, `courier-baseline`, `courier-executor`,
    /// `courier-metrics`, `courier-access`, `courier-dpop`, `ahc`,
    /// `urlsession`, `curl`,
    /// `curl-buffered`, `curl-courier-options`, `swift-loop`, `swift-loop-send`.
    let name: String
    let executable: String
    let mode: String
    /// Only run in 1 MiB cells (the streamed variant).
    let largeBodiesOnly: Bool
    /// Only run in event-stream cells (`sse`), and only there: a server-sent-events client.
    var eventsOnly = false
    /// Only run over TLS: a client that refuses plain HTTP (secured resource access).
    var needsTLS = false
    /// Takes `--http1`, so it runs in the HTTP/1.1+TLS cells (`h1s`).
    var speaksHTTP1OverTLS = false

    /// Whether the client runs in a cell of `size`.
    func runs(in size: BodySize) -> Bool {
        if size == .events { return eventsOnly }
        return !eventsOnly && (!largeBodiesOnly || size == .large)
    }

    /// Whether the client runs in a cell of `proto`.
    func runs(over proto: Protocol) -> Bool {
        switch proto {
        case .http1: !needsTLS
        case .http1TLS: speaksHTTP1OverTLS
        case .http2: true
        }
    }

    static let all: [Client] = [
        Client(
            name: "courier",
            executable: "CourierLoadClient",
            mode: "send",
            largeBodiesOnly: false,
            speaksHTTP1OverTLS: true
        ),
        // `ResourceAccess` with a stored device token, on a secured transport pinning the
        // harness's CA: a bearer token, and the same bound to a DPoP key (a proof per request).
        Client(
            name: "courier-access",
            executable: "CourierLoadClient",
            mode: "access",
            largeBodiesOnly: false,
            needsTLS: true,
            speaksHTTP1OverTLS: true
        ),
        Client(
            name: "courier-dpop",
            executable: "CourierLoadClient",
            mode: "dpop",
            largeBodiesOnly: false,
            needsTLS: true,
            speaksHTTP1OverTLS: true
        ),
        Client(name: "courier-stream", executable: "CourierLoadClient", mode: "stream", largeBodiesOnly: true),
        // An A/B run: `CourierLoadClient` of another revision, copied into the bin dir under this
        // name, beside the current one and the floors in the same run.
        Client(name: "courier-baseline", executable: "CourierLoadClientBaseline", mode: "send", largeBodiesOnly: false),
        // The same for streamed bodies (1 MiB cells).
        Client(
            name: "courier-stream-baseline",
            executable: "CourierLoadClientBaseline",
            mode: "stream",
            largeBodiesOnly: true
        ),
        Client(name: "courier-executor", executable: "CourierLoadClient", mode: "executor", largeBodiesOnly: false),
        Client(name: "courier-metrics", executable: "CourierLoadClient", mode: "metrics", largeBodiesOnly: false),
        Client(name: "ahc", executable: "AHCLoadClient", mode: "send", largeBodiesOnly: false),
        Client(name: "urlsession", executable: "URLSessionLoadClient", mode: "send", largeBodiesOnly: false),
        Client(name: "curl", executable: "CurlFloorClient", mode: "send", largeBodiesOnly: false),
        Client(name: "curl-buffered", executable: "CurlFloorClient", mode: "buffered", largeBodiesOnly: true),
        Client(name: "swift-loop", executable: "SwiftLoopClient", mode: "executor", largeBodiesOnly: false),
        Client(name: "swift-loop-send", executable: "SwiftLoopClient", mode: "send", largeBodiesOnly: false),
        Client(
            name: "curl-courier-options",
            executable: "CurlFloorClient",
            mode: "courier-options",
            largeBodiesOnly: false
        ),
        // Server-sent events (`--sizes sse`): each request reads the event stream of
        // `BodySize.events` and counts its events: the C floor, and Courier's `Session.events`.
        Client(name: "curl-sse", executable: "CurlSSEClient", mode: "send", largeBodiesOnly: false, eventsOnly: true),
        Client(
            name: "courier-sse",
            executable: "CourierLoadClient",
            mode: "sse",
            largeBodiesOnly: false,
            eventsOnly: true
        ),
    ]
}

enum Protocol: String, CaseIterable {
    case http1 = "h1"
    /// HTTP/1.1 to the TLS port: the clients are told not to offer HTTP/2 (`--http1`).
    case http1TLS = "h1s"
    case http2 = "h2"

    var title: String {
        switch self {
        case .http1: "HTTP/1.1"
        case .http1TLS: "HTTP/1.1+TLS"
        case .http2: "HTTP/2+TLS"
        }
    }

    /// Whether the cell's requests go to the TLS port.
    var usesTLS: Bool { self != .http1 }
}

enum BodySize: String, CaseIterable {
    case small = "1k"
    case large = "1m"
    /// An event stream (`text/event-stream`) of ``EventStreamFile/count`` events of 1 KiB data.
    case events = "sse"

    var bytes: Int {
        switch self {
        case .small: 1024
        case .large: 1 << 20
        case .events: EventStreamFile.size
        }
    }
    var title: String {
        switch self {
        case .small: "1 KiB"
        case .large: "1 MiB"
        case .events: "SSE \(EventStreamFile.count / 1000)k×1 KiB"
        }
    }
    /// The path on the harness's nginx.
    var path: String { self == .events ? EventStreamFile.path : "/bytes/\(rawValue)" }
}

/// One cell of the matrix.
struct Cell: Hashable {
    let proto: Protocol
    let size: BodySize
    let concurrency: Int
}

/// How long and how much each run may do.
struct Budget {
    var requests: Int
    var seconds: Double
    var warmupRequests: Int
    var warmupSeconds: Double
}

/// What one client process reported (or why it did not).
struct RunResult {
    var client: String
    var cell: Cell?
    /// The round of the matrix the run belongs to (from 0).
    var round = 0
    var requests = 0
    var errors = 0
    var bytes = 0
    var seconds = 0.0
    var userMicros = 0
    var systemMicros = 0
    var maxRSSKiB = 0
    var p50Micros = 0.0
    var p99Micros = 0.0
    var httpVersion = "n/a"
    /// Server-sent events counted (event-stream clients only).
    var events = 0
    var firstError: String?
    /// Set when the process crashed, timed out or printed no result.
    var failure: String?

    var requestsPerSecond: Double { seconds > 0 ? Double(requests) / seconds : 0 }
    var mebibytesPerSecond: Double { seconds > 0 ? Double(bytes) / seconds / 1_048_576 : 0 }
    var cpuMicrosPerRequest: Double { requests > 0 ? Double(userMicros + systemMicros) / Double(requests) : 0 }
    var cpuUtilisation: Double { seconds > 0 ? Double(userMicros + systemMicros) / 1e6 / seconds : 0 }
    var maxRSSMiB: Double { Double(maxRSSKiB) / 1024 }
    var eventsPerSecond: Double { seconds > 0 ? Double(events) / seconds : 0 }
    var cpuMicrosPerEvent: Double { events > 0 ? Double(userMicros + systemMicros) / Double(events) : 0 }
    /// CPU µs per MiB of body.
    var cpuMicrosPerMebibyte: Double {
        bytes > 0 ? Double(userMicros + systemMicros) / (Double(bytes) / 1_048_576) : 0
    }
}

/// How the server and the clients are scheduled against other work on the machine.
enum Scheduler: String, CaseIterable {
    /// `chrt -f 10`: SCHED_FIFO, so a runnable benchmark process always runs at once on its CPU.
    /// Needs root. The kernel's RT throttling still leaves 5 % of each CPU to other work.
    case fifo
    /// `nice -n -20`: the largest CFS share, but other work still delays wake-ups.
    case nice
    /// As started.
    case none

    var prefix: [String] {
        switch self {
        case .fifo: ["/usr/bin/chrt", "-f", "10"]
        case .nice: ["/usr/bin/nice", "-n", "-20"]
        case .none: []
        }
    }

    var description: String {
        switch self {
        case .fifo: "SCHED_FIFO priority 10 (`chrt -f 10`)"
        case .nice: "nice -20"
        case .none: "the default scheduling"
        }
    }
}

/// Starts client processes pinned to the client CPU and collects their RESULT lines.
final class ClientRunner {
    let binDirectory: URL
    let workDirectory: URL
    let clientCPU: Int
    let caFile: String
    /// Whether URLSession gets the test CA through a private mount namespace.
    let urlSessionCAMount: Bool
    /// How clients are scheduled ahead of other work on the machine.
    let scheduler: Scheduler
    private var sequence = 0

    init(
        binDirectory: URL,
        workDirectory: URL,
        clientCPU: Int,
        caFile: String,
        urlSessionCAMount: Bool,
        scheduler: Scheduler
    ) {
        self.scheduler = scheduler
        self.binDirectory = binDirectory
        self.workDirectory = workDirectory
        self.clientCPU = clientCPU
        self.caFile = caFile
        self.urlSessionCAMount = urlSessionCAMount
    }

    func run(
        _ client: Client,
        url: String,
        https: Bool,
        http1Only: Bool = false,
        concurrency: Int,
        connections: Int,
        expectBytes: Int,
        expectEvents: Int? = nil,
        budget: Budget
    ) -> RunResult {
        sequence += 1
        let tag = "\(sequence)-\(client.name)-c\(concurrency)"
        let outURL = touch(workDirectory.appendingPathComponent("run-\(tag).out"))
        let errURL = touch(workDirectory.appendingPathComponent("run-\(tag).err"))
        let executable = binDirectory.appendingPathComponent(client.executable).path
        var arguments = [
            "--url", url, "--concurrency", "\(concurrency)", "--connections", "\(connections)",
            "--requests", "\(budget.requests)", "--seconds", "\(budget.seconds)",
            "--warmup-requests", "\(budget.warmupRequests)", "--warmup-seconds", "\(budget.warmupSeconds)",
            "--expect-bytes", "\(expectBytes)", "--mode", client.mode,
        ]
        if https { arguments += ["--ca", caFile] }
        if http1Only { arguments += ["--http1"] }
        if let expectEvents { arguments += ["--expect-events", "\(expectEvents)"] }

        var command = scheduler.prefix + ["/usr/bin/taskset", "-c", "\(clientCPU)"]
        if client.name == "urlsession" && https && urlSessionCAMount {
            // FoundationNetworking cannot be given a CA on Linux: in a private mount namespace,
            // put the test CA where libcurl looks by default. The machine's file is untouched.
            command += [
                "unshare", "--mount", "--propagation", "private", "/bin/sh", "-c",
                "mount --bind \"$0\" /etc/ssl/certs/ca-certificates.crt && exec \"$@\"",
                caFile, executable,
            ]
        } else {
            command += [executable]
        }
        command += arguments

        let process = Process()
        process.executableURL = URL(fileURLWithPath: command[0])
        process.arguments = Array(command.dropFirst())
        var result = RunResult(client: client.name)
        do {
            process.standardOutput = try FileHandle(forWritingTo: outURL)
            process.standardError = try FileHandle(forWritingTo: errURL)
            try process.run()
        } catch {
            result.failure = "could not start: \(error)"
            return result
        }
        let limit = budget.warmupSeconds + budget.seconds + 90
        let deadline = Date().addingTimeInterval(limit)
        while process.isRunning && Date() < deadline { usleep(10_000) }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            result.failure = "killed after \(Int(limit)) s"
        } else if process.terminationReason == .uncaughtSignal {
            result.failure = "crashed (signal \(process.terminationStatus))"
        } else if process.terminationStatus != 0 {
            result.failure = "exit status \(process.terminationStatus)"
        }
        let output = (try? String(contentsOf: outURL, encoding: .utf8)) ?? ""
        guard let line = output.split(separator: "\n").last(where: { $0.hasPrefix("RESULT ") }),
            let object = try? JSONSerialization.jsonObject(with: Data(line.dropFirst(7).utf8)) as? [String: Any]
        else {
            let stderr = ((try? String(contentsOf: errURL, encoding: .utf8)) ?? "").suffix(400)
            result.failure = (result.failure ?? "no result") + (stderr.isEmpty ? "" : ": \(stderr)")
            return result
        }
        func int(_ key: String) -> Int { (object[key] as? NSNumber)?.intValue ?? 0 }
        func double(_ key: String) -> Double { (object[key] as? NSNumber)?.doubleValue ?? 0 }
        result.requests = int("requests")
        result.errors = int("errors")
        result.bytes = int("bytes")
        result.seconds = double("seconds")
        result.userMicros = int("user_us")
        result.systemMicros = int("sys_us")
        result.maxRSSKiB = int("maxrss_kib")
        result.p50Micros = double("p50_us")
        result.p99Micros = double("p99_us")
        result.httpVersion = object["http_version"] as? String ?? "n/a"
        result.events = int("events")
        result.firstError = object["first_error"] as? String
        return result
    }
}
