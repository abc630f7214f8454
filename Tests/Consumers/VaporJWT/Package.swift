// swift-tools-version:6.2
import PackageDescription

// A Vapor service that signs its own tokens with JWT and calls upstreams with Courier: the
// three must resolve together (scripts/check-dependencies.sh resolves it; it is never built).
let package = Package(
    name: "VaporJWTConsumer",
    platforms: [.macOS(.v15)],
    dependencies: [
        // `name:` pins the identity to "courier" whatever the checkout's folder is called.
        .package(name: "courier", path: "../../.."),
        .package(url: "https://github.com/vapor/vapor.git", from: "4.122.0"),
        .package(url: "https://github.com/vapor/jwt.git", from: "5.2.0"),
    ],
    targets: [
        .executableTarget(
            name: "VaporJWTConsumer",
            dependencies: [
                .product(name: "Courier", package: "courier"),
                .product(name: "Vapor", package: "vapor"),
                .product(name: "JWT", package: "jwt"),
            ],
            path: "Sources"
        )
    ]
)
