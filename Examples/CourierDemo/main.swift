import Courier
import Foundation
import HTTPTypes
import Logging

// The README's demo: Courier against the local servers that scripts/demo.sh starts.
//
//     swift run CourierDemo <ready-file written by Tests/Servers/serve.py>

struct Ready: Decodable {
    struct PKI: Decodable { let ca_bundle: String }
    let urls: [String: String]
    let pki: PKI

    func url(_ name: String) throws -> URL {
        guard let text = urls[name], let url = URL(string: text) else {
            throw DemoError("no \(name) server in the ready file")
        }
        return url
    }
}

func readReadyFile() throws -> Ready {
    guard CommandLine.arguments.count > 1 else {
        throw DemoError("usage: CourierDemo <ready-file>; run scripts/demo.sh instead")
    }
    let data = try Data(contentsOf: URL(fileURLWithPath: CommandLine.arguments[1]))
    return try JSONDecoder().decode(Ready.self, from: data)
}

struct DemoError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Writes a line to standard output at once (no buffering), so it stays in order with log lines.
func say(_ text: String, terminator: String = "\n") {
    FileHandle.standardOutput.write(Data((text + terminator).utf8))
}

func milliseconds(_ duration: Duration) -> String {
    let (seconds, attoseconds) = duration.components
    return String(format: "%.2f ms", Double(seconds) * 1000 + Double(attoseconds) / 1e15)
}

func describe(_ response: Response, _ title: String) {
    say("\n== \(title)")
    say("status   \(response.status.code) \(response.status.reasonPhrase)")
    for field in response.headerFields { say("header   \(field.name): \(field.value)") }
    say("body     \(response.data.count) bytes")
    if let m = response.metrics {
        say(
            "timing   dns \(milliseconds(m.nameLookup)) · connect \(milliseconds(m.connect)) · tls \(milliseconds(m.tlsHandshake)) · first byte \(milliseconds(m.timeToFirstByte)) · total \(milliseconds(m.total))"
        )
        say("wire     \(m.httpVersion.rawValue), connection reused: \(m.isConnectionReused)")
    }
}

func progressBar(_ fraction: Double, width: Int = 40) -> String {
    let filled = Int((fraction * Double(width)).rounded(.down))
    return "[" + String(repeating: "#", count: filled) + String(repeating: ".", count: width - filled) + "]"
}

// One stream: log lines and the demo's own lines go to standard output, each written at
// once, so they come out in the same order on a terminal and in a file.
LoggingSystem.bootstrap { label in StreamLogHandler.standardOutput(label: label) }
let isTerminal = isatty(STDOUT_FILENO) == 1

let ready = try readReadyFile()
var logger = Logger(label: "courier.demo")
logger.logLevel = .info
let transport = CurlTransport(configuration: .init(proxy: .none, trustedCertificateBundlePath: ready.pki.ca_bundle))
let session = Session(
    configuration: .init(
        baseURL: try ready.url("nginx_https"),
        applicationProduct: "CourierDemo/1.0",
        middlewares: [LoggingMiddleware(logger: logger)]
    ),
    transport: transport
)
say("Courier on libcurl \(CurlTransport.libcurlVersion)")
say("User-Agent: \(session.configuration.userAgent)")

describe(
    try await session.send(HTTPRequest(method: .get, path: "/bytes/1k")),
    "GET /bytes/1k over HTTPS (first request)"
)
describe(
    try await session.send(HTTPRequest(method: .get, path: "/bytes/1k")),
    "GET /bytes/1k again: the connection is reused"
)

say("\n== 64 MiB download with progress")
let download = session.task(for: HTTPRequest(method: .get, path: "/bytes/64m"))
var lastPrinted = -1
for await event in download.events {
    if case .downloadProgress(let progress) = event, let fraction = progress.fractionCompleted {
        let percent = Int(fraction * 100)
        // On a terminal the bar redraws in place; in a file, one line per quarter.
        let step = isTerminal ? 1 : 25
        guard percent / step != lastPrinted / step || lastPrinted < 0 else { continue }
        lastPrinted = percent
        if isTerminal {
            // The bar's line ends at 100 %, before the log line of the finished response.
            say("\r\(progressBar(fraction)) \(percent)%", terminator: percent == 100 ? "\n" : "")
        } else {
            say("\(progressBar(fraction)) \(percent)%")
        }
    }
}
let large = try await download.value
say("received \(large.data.count) bytes in \(milliseconds(large.metrics?.total ?? .zero)), state \(download.state)")

say("\n== 100 concurrent requests over one HTTP/2 connection")
let quiet = Session(configuration: .init(baseURL: try ready.url("nginx_https")), transport: transport)
let start = ContinuousClock.now
let versions = try await withThrowingTaskGroup(of: Response.Metrics.HTTPVersion.self) { group in
    for _ in 0..<100 {
        group.addTask {
            try await quiet.send(HTTPRequest(method: .get, path: "/bytes/1k")).metrics?.httpVersion ?? .unknown
        }
    }
    var counts: [Response.Metrics.HTTPVersion: Int] = [:]
    for try await version in group { counts[version, default: 0] += 1 }
    return counts
}
say(
    "done in \(milliseconds(ContinuousClock.now - start)): \(versions.map { "\($0.value) × \($0.key.rawValue)" }.joined(separator: ", "))"
)

await session.shutdown()
await quiet.shutdown()
await transport.shutdown()

// Secured resource access: the four request kinds, one refresh for a burst, pinning, logout.
try await AuthDemo.run(readyFile: CommandLine.arguments[1])
