#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one load-client process is asked to do. Every client (Swift or C) takes the same
/// flags, so the driver starts them all the same way:
///
/// ```
/// <client> --url http://127.0.0.1:8080/bytes/1k --concurrency 64 --connections 64 \
///          --requests 30000 --seconds 2 --warmup-requests 500 --warmup-seconds 0.5 \
///          --expect-bytes 1024 [--ca /path/ca.pem] [--http1] [--mode send|stream]
/// ```
///
/// Nothing here uses Foundation, so the AsyncHTTPClient client's RSS is not charged for it.
public struct LoadOptions: Sendable {
    /// The absolute URL every request fetches.
    public var url = ""
    /// How many requests are in flight at once (one worker task per slot).
    public var concurrency = 1
    /// The most connections the client may open to the server (the pool limit).
    public var connections = 1
    /// The measured phase ends after this many requests...
    public var requests = 1000
    /// ...or after this many seconds, whichever comes first.
    public var seconds = 2.0
    /// The warm-up phase (not measured) ends after this many requests...
    public var warmupRequests = 100
    /// ...or after this many seconds, whichever comes first.
    public var warmupSeconds = 0.5
    /// The body length every response must have; anything else counts as an error.
    public var expectBytes = -1
    /// The events every event-stream response must hold (server-sent-event clients), or -1.
    public var expectEvents = -1
    /// A PEM file of the certificate authority to trust for HTTPS.
    public var caFile: String?
    /// A client-specific variant, such as `stream` for Courier's streamed bodies.
    public var mode = "send"
    /// Whether HTTPS must stay on HTTP/1.1 (`--http1`), though the server offers HTTP/2. Only
    /// the clients the harness runs in its HTTP/1.1+TLS cells honour it.
    public var http1Only = false

    /// Parses `CommandLine.arguments`; exits with status 64 on a bad flag.
    public static func parse(_ arguments: [String] = CommandLine.arguments) -> LoadOptions {
        var options = LoadOptions()
        var index = 1
        func number<N: LosslessStringConvertible>(_ text: String) -> N {
            guard let parsed = N(text) else { usage("bad value \(text) for \(arguments[index - 1])") }
            return parsed
        }
        func value() -> String {
            index += 1
            guard index < arguments.count else { usage("missing value for \(arguments[index - 1])") }
            return arguments[index]
        }
        while index < arguments.count {
            switch arguments[index] {
            case "--url": options.url = value()
            case "--concurrency": options.concurrency = number(value())
            case "--connections": options.connections = number(value())
            case "--requests": options.requests = number(value())
            case "--seconds": options.seconds = number(value())
            case "--warmup-requests": options.warmupRequests = number(value())
            case "--warmup-seconds": options.warmupSeconds = number(value())
            case "--expect-bytes": options.expectBytes = number(value())
            case "--expect-events": options.expectEvents = number(value())
            case "--ca": options.caFile = value()
            case "--mode": options.mode = value()
            case "--http1": options.http1Only = true
            default: usage("unknown flag \(arguments[index])")
            }
            index += 1
        }
        if options.url.isEmpty { usage("--url is required") }
        return options
    }

    /// The URL split into `scheme://authority` and the path with its query.
    public var originAndPath: (origin: String, path: String) {
        let bytes = Array(url.utf8)
        var index = 0
        while index + 2 < bytes.count, !(bytes[index] == 0x3A && bytes[index + 1] == 0x2F && bytes[index + 2] == 0x2F) {
            index += 1
        }
        guard index + 2 < bytes.count else { return (url, "/") }
        guard let slash = bytes[(index + 3)...].firstIndex(of: 0x2F) else { return (url, "/") }
        return (String(decoding: bytes[..<slash], as: UTF8.self), String(decoding: bytes[slash...], as: UTF8.self))
    }
}

private func usage(_ message: String) -> Never {
    let line = Array("error: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(64)
}
