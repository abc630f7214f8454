// swift-tools-version:6.2
import PackageDescription

// Courier built against swift-crypto 3, the lowest major it accepts (the root package resolves
// to the newest): scripts/check-dependencies.sh builds this package.
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
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Sources"
        )
    ]
)
