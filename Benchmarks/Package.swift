// swift-tools-version:6.1
import PackageDescription

// The Courier benchmark harness: a separate package so that the library's own build and CI
// never pull in AsyncHTTPClient or ordo-one/benchmark.
//
// - `LoadHarness` drives the load benchmark: it starts nginx, then runs each client below in
//   its own process pinned to one CPU, and writes the table to RESULTS.md.
// - `CourierLoadClient`, `AHCLoadClient`, `URLSessionLoadClient` and `CurlFloorClient` are
//   those clients; each is a small executable so that its RSS and CPU are its own.
// - `CourierMicro` holds the micro benchmarks (ordo-one/benchmark).
// - `StoreBenchmark` measures the SQLite token store (`run.sh store`).
let package = Package(
    name: "CourierBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` pins the identity to "courier" whatever the checkout's folder is called.
        .package(name: "courier", path: "../"),
        .package(url: "https://github.com/swift-server/async-http-client.git", exact: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.0"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.8.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/ordo-one/benchmark.git", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        // Shared by the Swift load clients: argument parsing, the bounded request loop,
        // getrusage and the one-line JSON result.
        .target(name: "LoadClientSupport", path: "Sources/LoadClientSupport"),
        .executableTarget(
            name: "CourierLoadClient",
            dependencies: [
                "LoadClientSupport",
                .product(name: "Courier", package: "courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Sources/CourierLoadClient"
        ),
        // The fault matrix: one line per kind of broken server (`Benchmarks/run.sh faults`).
        .executableTarget(
            name: "FaultMatrixClient",
            dependencies: [
                .product(name: "Courier", package: "courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/FaultMatrixClient"
        ),
        .executableTarget(
            name: "AHCLoadClient",
            dependencies: [
                "LoadClientSupport",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
            ],
            path: "Sources/AHCLoadClient"
        ),
        .executableTarget(
            name: "URLSessionLoadClient",
            dependencies: ["LoadClientSupport"],
            path: "Sources/URLSessionLoadClient"
        ),
        // The floor: C driving libcurl multi directly, no Swift at all.
        .executableTarget(
            name: "CurlFloorClient",
            path: "Sources/CurlFloorClient",
            cSettings: [.define("_GNU_SOURCE"), .unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("curl")]
        ),
        // The C floor for server-sent events: libcurl multi, each body parsed as an event stream.
        .executableTarget(
            name: "CurlSSEClient",
            path: "Sources/CurlSSEClient",
            cSettings: [.define("_GNU_SOURCE"), .unsafeFlags(["-O2"])],
            linkerSettings: [.linkedLibrary("curl")]
        ),
        // The Swift floor: a bare Swift curl-multi loop that is also the callers' task executor.
        .target(
            name: "CSwiftLoopCurl",
            path: "Sources/CSwiftLoopCurl",
            linkerSettings: [.linkedLibrary("curl")]
        ),
        .executableTarget(
            name: "SwiftLoopClient",
            dependencies: ["CSwiftLoopCurl", "LoadClientSupport"],
            path: "Sources/SwiftLoopClient"
        ),
        .executableTarget(
            name: "LoadHarness",
            dependencies: [.product(name: "ArgumentParser", package: "swift-argument-parser")],
            path: "Sources/LoadHarness"
        ),
        // The SQLite token store's figures (`Benchmarks/run.sh store`): a million users' tokens,
        // the latency of a read and of a compare-and-swap write, the memory of a process serving
        // fifty thousand users at once.
        .executableTarget(
            name: "StoreBenchmark",
            dependencies: [
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierSQLite", package: "courier"),
                .product(name: "CourierTesting", package: "courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
            ],
            path: "Sources/StoreBenchmark"
        ),
        // The heap in use (glibc's mallinfo2), for the memory per user of CourierMicro.
        .target(name: "CHeapInfo", path: "Sources/CHeapInfo"),
        .executableTarget(
            name: "CourierMicro",
            dependencies: [
                "CHeapInfo",
                "CSwiftLoopCurl",
                "LoadClientSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierTesting", package: "courier"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Prometheus", package: "swift-prometheus"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ],
            path: "Benchmarks/CourierMicro",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
