// What one request costs on the real path: `Session.send` over `CurlTransport` to the harness's
// nginx on 127.0.0.1 (1 KiB static body, keep-alive connections that nginx never closes), one
// request at a time, so that every allocation of the request — Courier's, libcurl's, the
// concurrency runtime's — is counted per iteration and the count does not depend on timing.
//
// - `Session.send.curl.h1`: plain HTTP/1.1.
// - `Session.send.curl.h2`: HTTPS with HTTP/2 (TLS 1.3, the harness's CA).
// - `Session.send.curl.h1.executor`: HTTP/1.1 from a task that prefers the transport's loop
//   as its executor (`CurlTransport.executor`): no thread hop per request.
//
// - `SwiftLoop.curl.h1` and `SwiftLoop.curl.h1.executor`: the same request through the bare Swift
//   loop of the load harness (`SwiftLoopClient`'s `CurlLoop`, compiled in here too), its callers on
//   the global executor or on the loop: what a request costs without Courier, counted the same way.
//
// `Benchmarks/run.sh micro` and `Benchmarks/run.sh check` start the nginx and pass its origins in
// `COURIER_MICRO_HTTP1`, `COURIER_MICRO_TLS` and `COURIER_MICRO_CA`; without them these
// benchmarks are not registered (a bare `swift package benchmark` has no server to talk to).
//
// Their allocation counts have thresholds in `Thresholds/` (see README.md, "Thresholds"),
// checked by `Benchmarks/run.sh check`.
import Benchmark
import Courier
import Foundation
import HTTPTypes
import LoadClientSupport

/// The origins of the harness's nginx, from the environment `run.sh` sets.
struct MicroServer {
    let http1: URL
    let tls: URL
    let caFile: String

    static let current: MicroServer? = {
        let environment = ProcessInfo.processInfo.environment
        guard let http1 = environment["COURIER_MICRO_HTTP1"].flatMap(URL.init(string:)),
            let tls = environment["COURIER_MICRO_TLS"].flatMap(URL.init(string:)),
            let caFile = environment["COURIER_MICRO_CA"]
        else { return nil }
        return MicroServer(http1: http1, tls: tls, caFile: caFile)
    }()
}

/// The request of every curl-path benchmark: the 1 KiB body, relative to the session's base.
let curlPathRequestPath = "/bytes/1k"

/// Fails the benchmark unless the response is the 1 KiB body.
func expectKibibyte(_ response: Response) throws {
    guard response.statusCode == 200, response.data.count == 1024 else {
        throw AuthBenchmarkError(
            description: "unexpected response: \(response.statusCode), \(response.data.count) bytes"
        )
    }
}

func registerCurlPathBenchmarks() {
    guard let server = MicroServer.current else { return }
    // Allocation counts of one request are exact: a request that costs more is a regression.
    // Counts are per sample of 1,000 requests; the tolerance (half an allocation per request)
    // absorbs the one-off allocations of a sample (the runtime growing a table, say).
    let counted = Benchmark.Configuration(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 200,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 20_000,
        thresholds: [.mallocCountTotal: .init(absolute: [.p90: 500])]
    )

    func session(to origin: URL) -> (Session, CurlTransport) {
        var transportConfiguration = CurlTransport.Configuration()
        transportConfiguration.trustedCertificateBundlePath = server.caFile
        transportConfiguration.maximumConnectionsPerHost = 1
        let transport = CurlTransport(configuration: transportConfiguration)
        return (Session(configuration: .init(baseURL: origin), transport: transport), transport)
    }

    /// One warm request (which must be the 1 KiB body), then the measured ones.
    func measure(_ session: Session, _ benchmark: Benchmark) async throws {
        try expectKibibyte(try await session.send(HTTPRequest(method: .get, path: curlPathRequestPath)))
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await session.send(HTTPRequest(method: .get, path: curlPathRequestPath)))
        }
        benchmark.stopMeasurement()
    }

    for (name, origin) in [("h1", server.http1), ("h2", server.tls)] {
        Benchmark("Session.send.curl.\(name)", configuration: counted) { benchmark in
            let (session, transport) = session(to: origin)
            try await measure(session, benchmark)
            await transport.shutdown()
        }
    }

    Benchmark("Session.send.curl.h1.executor", configuration: counted) { benchmark in
        let (session, transport) = session(to: server.http1)
        try await withTaskExecutorPreference(transport.executor) { try await measure(session, benchmark) }
        await transport.shutdown()
    }

    for (name, onLoop) in [("h1", false), ("h1.executor", true)] {
        Benchmark("SwiftLoop.curl.\(name)", configuration: counted) { benchmark in
            let url = URL(string: curlPathRequestPath, relativeTo: server.http1)!.absoluteString
            let options = LoadOptions.parse(["swift-loop", "--url", url, "--connections", "1"])
            let loop = CurlLoop(options: options)
            func measure() async throws {
                let warm = await withUnsafeContinuation { loop.start($0) }
                guard warm.status == 200, warm.bytes == 1024 else {
                    throw AuthBenchmarkError(description: "unexpected response: \(warm.status), \(warm.bytes) bytes")
                }
                benchmark.startMeasurement()
                for _ in benchmark.scaledIterations {
                    blackHole(await withUnsafeContinuation { loop.start($0) })
                }
                benchmark.stopMeasurement()
            }
            if onLoop {
                try await withTaskExecutorPreference(loop) { try await measure() }
            } else {
                try await measure()
            }
            loop.stop()
        }
    }
}
