// swift-tools-version:6.2
import PackageDescription

// A Hummingbird 2 service that calls a secured upstream through Courier on behalf of its own
// callers. It depends on Courier by path, so it always builds against this checkout.
let package = Package(
    name: "courier-service",
    platforms: [.macOS(.v15)],
    products: [
        .executable(name: "courier-service", targets: ["CourierService"])
    ],
    dependencies: [
        // `name:` gives the path dependency a stable identity: without it, the identity is the
        // checkout's folder name, which differs between clones.
        // The `ServiceLifecycle` trait adds `CourierServiceLifecycle`, which makes
        // `ResourceAccess` a service of the group; Hummingbird already brings the package.
        .package(name: "courier", path: "../..", traits: ["ServiceLifecycle"]),
        // Only the `Hummingbird` product; without its default traits it builds no
        // swift-configuration.
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1", traits: []),
        // Already in the graph through both; named because the service imports them itself
        // (NIOCore for the event loop that paces the bodies it streams through).
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.0"),
    ],
    targets: [
        .executableTarget(
            name: "CourierService",
            dependencies: [
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierServiceLifecycle", package: "courier"),
                .product(name: "Hummingbird", package: "hummingbird"),
                .product(name: "HTTPTypes", package: "swift-http-types"),
                .product(name: "Logging", package: "swift-log"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "UnixSignals", package: "swift-service-lifecycle"),
            ],
            swiftSettings: [
                .enableUpcomingFeature("ExistentialAny"),
                .enableUpcomingFeature("MemberImportVisibility"),
                .enableUpcomingFeature("InternalImportsByDefault"),
            ]
        )
    ]
)
