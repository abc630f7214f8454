// swift-tools-version:6.2
import PackageDescription

let package = Package(
    name: "courier",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Courier", targets: ["Courier"]),
        .library(name: "CourierTesting", targets: ["CourierTesting"]),
        // Tokens shared by a fleet through PostgreSQL; a product of its own so that `Courier`
        // keeps no SwiftNIO dependency.
        .library(name: "CourierPostgres", targets: ["CourierPostgres"]),
        // `Session` and `ResourceAccess` as services of a swift-service-lifecycle `ServiceGroup`; a
        // product of its own so that `Courier` does not build swift-async-algorithms and swift-collections.
        .library(name: "CourierServiceLifecycle", targets: ["CourierServiceLifecycle"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/apple/swift-crypto.git", from: "3.12.3"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-distributed-tracing.git", from: "1.7.3"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        // Only for the compiled documentation samples, which bootstrap Prometheus.
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
    ],
    targets: [
        .systemLibrary(
            name: "CCurl",
            pkgConfig: "libcurl",
            providers: [.apt(["libcurl4-openssl-dev"])]
        ),
        // OpenSSL for the chain-pinning verify hook (CCurlShim/CCourierTLS.c).
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl", providers: [.apt(["libssl-dev"])]),
        .target(name: "CCurlShim", dependencies: ["CCurl", "COpenSSL"], cSettings: [.define("_GNU_SOURCE")]),
        .target(
            name: "Courier",
            dependencies: [
                "CCurlShim",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                // RSA PKCS#1 v1.5 signatures for private_key_jwt client assertions (RS256).
                .product(name: "_CryptoExtras", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
            ]
        ),
        .target(name: "CourierTesting", dependencies: ["Courier"]),
        .target(
            name: "CourierServiceLifecycle",
            dependencies: [
                "Courier",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        .target(
            name: "CourierPostgres",
            dependencies: [
                "Courier",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "CourierDemo",
            dependencies: [
                "Courier",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Runs one secured request; the debugger-detection test starts it under strace.
        .executableTarget(
            name: "CourierSecurityProbe",
            dependencies: ["Courier", .product(name: "HTTPTypes", package: "swift-http-types")]
        ),
        // The load of one member of a fleet sharing a token store, for any SharedTokenStore
        // (each store's member executable reuses it), and the file store's member.
        .target(name: "CourierFleet", dependencies: ["Courier", .product(name: "Logging", package: "swift-log")]),
        .executableTarget(name: "CourierFleetMember", dependencies: ["Courier", "CourierFleet"]),
        // The same load over the PostgreSQL store: the CourierPostgres fleet tests start eight.
        .executableTarget(
            name: "CourierPostgresFleetMember",
            dependencies: [
                "Courier", "CourierFleet", "CourierPostgres", .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "CourierTests",
            dependencies: [
                "Courier", "CourierTesting", "CourierSecurityProbe", "CourierFleet", "CourierFleetMember",
                "CourierServiceLifecycle",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "MetricsTestKit", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "InMemoryTracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "_CryptoExtras", package: "swift-crypto"),
            ]
        ),
        .testTarget(
            name: "CourierPostgresTests",
            dependencies: [
                "Courier", "CourierPostgres", "CourierPostgresFleetMember",
                .product(name: "PostgresNIO", package: "postgres-nio"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
            ]
        ),
        // The ```swift blocks of README.md and Documentation.docc, compiled (never run):
        // Samples.swift is generated by scripts/extract-samples.py, SampleContext.swift by hand.
        .testTarget(
            name: "DocSamples",
            dependencies: [
                "Courier", "CourierTesting", "CourierServiceLifecycle",
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "CoreMetrics", package: "swift-metrics"),
                .product(name: "Tracing", package: "swift-distributed-tracing"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
                .product(name: "Prometheus", package: "swift-prometheus"),
            ],
            path: "Tests/DocSamples"
        ),
    ]
)

for target in package.targets where [.regular, .test, .executable].contains(target.type) {
    var settings = target.swiftSettings ?? []
    settings += [
        .enableUpcomingFeature("ExistentialAny"),
        .enableUpcomingFeature("MemberImportVisibility"),
        .enableUpcomingFeature("InternalImportsByDefault"),
    ]
    if target.type == .regular {
        settings.append(.treatWarning("ExplicitSendable", as: .error))
    }
    target.swiftSettings = settings
}
