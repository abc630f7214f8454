// swift-tools-version:6.1
import PackageDescription

// Courier's fuzz targets: one libFuzzer executable per parser of untrusted bytes. A package of
// its own (it depends on the root by path), so the library's build never sees the fuzzer flags.
// Build and run them with `scripts/fuzz.sh` (see Fuzz/README.md): every module is compiled with
// `-sanitize=fuzzer,address` in a debug build, whose testable imports reach Courier's internal
// parsers. Each target's top-level code hands its function to libFuzzer (`Fuzzer.run`).
let fuzzTargets = [
    "FuzzChallenge", "FuzzTokenResponse", "FuzzDiscovery", "FuzzXML", "FuzzTokenStoreFile", "FuzzMediaType",
    "FuzzRetryAfter", "FuzzResponseHead", "FuzzBackoff", "FuzzChunkedBody", "FuzzAuthority",
    "FuzzEventStream",
]

let package = Package(
    name: "CourierFuzz",
    platforms: [.macOS(.v15)],
    dependencies: [.package(name: "courier", path: "../")],
    targets: [
        .target(name: "CFuzzerDriver", path: "Sources/CFuzzerDriver"),
        .target(
            name: "FuzzSupport",
            dependencies: ["CFuzzerDriver", .product(name: "Courier", package: "courier")],
            path: "Sources/FuzzSupport"
        ),
    ]
        + fuzzTargets.map { name in
            .executableTarget(
                name: name,
                dependencies: ["FuzzSupport", .product(name: "Courier", package: "courier")],
                path: "Sources/\(name)"
            )
        }
)
