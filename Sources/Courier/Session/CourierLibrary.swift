/// Facts about the Courier library itself.
enum CourierLibrary: Sendable {
    /// The library's version.
    static let version = "0.4.0"

    /// The operating system and CPU architecture, as the User-Agent names them.
    static var platform: String {
        #if os(Linux)
        let system = "Linux"
        #elseif os(macOS)
        let system = "macOS"
        #else
        let system = "unknown"
        #endif
        #if arch(x86_64)
        return "\(system); x86_64"
        #elseif arch(arm64)
        return "\(system); aarch64"
        #else
        return "\(system); unknown"
        #endif
    }
}
