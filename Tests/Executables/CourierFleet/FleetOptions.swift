public import Foundation

/// What one fleet member does: which servers it talks to, which token level it uses, and how
/// hard and how long it sends requests.
///
/// Read from `--name value` arguments, then from `COURIER_FLEET_NAME` environment variables
/// (the name upper-cased, dashes as underscores), then the defaults.
public struct FleetOptions: Sendable {
    /// Which token the callers use.
    public enum Level: String, Sendable {
        /// The device token (client credentials): anonymous requests.
        case device
        /// The one user's token, signed in beforehand and kept in the shared store (refresh
        /// tokens rotate): authenticated requests.
        case user
    }

    /// A name for this member in its summary.
    public var member: String
    /// The authorization server (HTTPS).
    public var oauth: URL
    /// The resource gateway (HTTPS).
    public var gateway: URL
    /// PEM CA bundle the servers' certificates chain to.
    public var caBundle: String
    /// SPKI pins (`sha256//…`) of the servers' keys.
    public var pins: [String]
    /// The user client's id and secret.
    public var userClientID: String
    /// The user client's secret.
    public var userClientSecret: String
    /// The device client's id.
    public var deviceClientID: String
    /// The device client's secret.
    public var deviceClientSecret: String
    /// The store kind (`file` in this executable; other members add their own).
    public var storeKind: String
    /// The store's location: a file path for `file`, a connection string for others.
    public var storePath: String
    /// The level the callers use.
    public var level: Level
    /// Concurrent callers.
    public var callers: Int
    /// How long the callers send requests.
    public var duration: Duration
    /// The most requests one caller sends.
    public var requestsPerCaller: Int
    /// The pause between one caller's requests.
    public var pause: Duration
    /// The request path on the gateway; by default the level's.
    public var path: String
    /// How long before expiry tokens are renewed.
    public var leeway: Duration
    /// How long a renewal's lease on the shared store holds.
    public var leaseDuration: Duration
    /// A PEM file with the DPoP key (P-256) both clients prove their tokens with; `nil` for
    /// bearer tokens.
    public var dpopKeyFile: String?
    /// A PEM client certificate and its key, presented to the servers: the authorization
    /// server then binds the tokens to it.
    public var clientCertificate: (certificate: String, key: String)?

    /// Reads the options.
    ///
    /// - Parameters:
    ///   - arguments: The command line, without the executable's name.
    ///   - environment: The environment.
    /// - Throws: ``FleetOptionsError`` for a missing or malformed option.
    public init(
        arguments: [String] = Array(CommandLine.arguments.dropFirst()),
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws {
        var values: [String: String] = [:]
        var index = arguments.startIndex
        while index < arguments.endIndex {
            let name = arguments[index]
            guard name.hasPrefix("--"), index + 1 < arguments.endIndex else {
                throw FleetOptionsError(message: "expected --name value, got \(name)")
            }
            values[String(name.dropFirst(2))] = arguments[index + 1]
            index += 2
        }
        func value(_ name: String) -> String? {
            values[name]
                ?? environment["COURIER_FLEET_" + name.uppercased().replacingOccurrences(of: "-", with: "_")]
        }
        func required(_ name: String) throws -> String {
            guard let text = value(name), !text.isEmpty else {
                throw FleetOptionsError(message: "--\(name) is missing")
            }
            return text
        }
        func url(_ name: String) throws -> URL {
            guard let url = URL(string: try required(name)) else {
                throw FleetOptionsError(message: "--\(name) is no URL")
            }
            return url
        }
        func number(_ name: String, _ fallback: Double) throws -> Double {
            guard let text = value(name) else { return fallback }
            guard let number = Double(text), number >= 0 else {
                throw FleetOptionsError(message: "--\(name) is no number: \(text)")
            }
            return number
        }
        member = value("member") ?? "member-\(ProcessInfo.processInfo.processIdentifier)"
        oauth = try url("oauth")
        gateway = try url("gateway")
        caBundle = try required("ca-bundle")
        pins = try required("pins").split(separator: ",").map(String.init)
        userClientID = value("user-client-id") ?? "courier-user"
        userClientSecret = value("user-client-secret") ?? "user-secret"
        deviceClientID = value("device-client-id") ?? "courier-device"
        deviceClientSecret = value("device-client-secret") ?? "device-secret"
        storeKind = value("store") ?? "file"
        storePath = try required("store-path")
        guard let level = Level(rawValue: value("level") ?? "device") else {
            throw FleetOptionsError(message: "--level is device or user")
        }
        self.level = level
        callers = max(1, Int(try number("callers", 10)))
        duration = .milliseconds(Int(try number("seconds", 10) * 1000))
        requestsPerCaller = max(1, Int(try number("requests-per-caller", 10_000)))
        pause = .milliseconds(Int(try number("pause-ms", 50)))
        path = value("path") ?? (level == .device ? "/api/device/info" : "/api/user/profile")
        leeway = .milliseconds(Int(try number("leeway-seconds", 30) * 1000))
        leaseDuration = .milliseconds(Int(try number("lease-seconds", 10) * 1000))
        dpopKeyFile = value("dpop-key-file")
        if let certificate = value("client-certificate") {
            clientCertificate = (certificate, try required("client-key"))
        }
    }
}

/// A missing or malformed fleet option.
public struct FleetOptionsError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    public var message: String
    /// The message.
    public var description: String { message }

    /// Creates an error.
    ///
    /// - Parameter message: What is wrong.
    public init(message: String) { self.message = message }
}
