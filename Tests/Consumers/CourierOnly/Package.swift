// swift-tools-version:6.2
import PackageDescription

// A service that depends on the `Courier` product alone, with no trait: scripts/check-dependencies.sh
// resolves it and compares the packages it checks out with the list there.
let package = Package(
    name: "CourierOnlyConsumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` pins the identity to "courier" whatever the checkout's folder is called.
        .package(name: "courier", path: "../../..")
    ],
    targets: [
        .target(
            name: "CourierOnlyConsumer",
            dependencies: [.product(name: "Courier", package: "courier")],
            path: "Sources"
        )
    ]
)
