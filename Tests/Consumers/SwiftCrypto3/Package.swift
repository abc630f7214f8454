// swift-tools-version:6.2
import PackageDescription

// Courier built against swift-crypto 3, the lowest major it accepts (the root package resolves
// to the newest), as a service builds it — with Courier's traits off, so that every product
// also builds as the empty module a consumer without its trait gets: scripts/check-dependencies.sh
// builds this package.
let package = Package(
    name: "SwiftCrypto3Consumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` pins the identity to "courier" whatever the checkout's folder is called.
        .package(name: "courier", path: "../../.."),
        .package(url: "https://github.com/apple/swift-crypto.git", exact: "3.12.3"),
    ],
    targets: [
        .target(
            name: "SwiftCrypto3Consumer",
            dependencies: [
                .product(name: "Courier", package: "courier"),
                .product(name: "CourierTesting", package: "courier"),
                .product(name: "CourierPostgres", package: "courier"),
                .product(name: "CourierOpenAPI", package: "courier"),
                .product(name: "CourierServiceLifecycle", package: "courier"),
                .product(name: "CourierSQLite", package: "courier"),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources"
        )
    ]
)
