import Courier
import Foundation

/// What the service needs to know, from `--name value` arguments or `COURIER_SERVICE_NAME`
/// environment variables (an argument wins). Pass secrets through the environment: a process's
/// arguments can be read by every user of the machine.
///
/// | argument | environment | |
/// |---|---|---|
/// | `--host` | `COURIER_SERVICE_HOST` | the address to listen on, `127.0.0.1` by default |
/// | `--port` | `COURIER_SERVICE_PORT` | the port, `8080` by default; `0` lets the system pick one |
/// | `--resource-base-url` | `COURIER_SERVICE_RESOURCE_BASE_URL` | the secured upstream (HTTPS) |
/// | `--authorization-server` | `COURIER_SERVICE_AUTHORIZATION_SERVER` | the OAuth 2.0 server (HTTPS) |
/// | `--ca-bundle` | `COURIER_SERVICE_CA_BUNDLE` | a PEM file: the only roots trusted for both |
/// | `--pins` | `COURIER_SERVICE_PINS` | optional SPKI pins (`sha256//…`), comma-separated |
/// | `--user-client-id`, `--user-client-secret` | `COURIER_SERVICE_USER_CLIENT_ID`, `…_SECRET` | the client for user tokens |
/// | `--device-client-id`, `--device-client-secret` | `COURIER_SERVICE_DEVICE_CLIENT_ID`, `…_SECRET` | the client for the device token |
struct ServiceConfiguration: Sendable {
    var host: String
    var port: Int
    var access: ResourceAccess.Configuration

    struct Invalid: Error, CustomStringConvertible {
        let description: String
    }

    init(arguments: [String], environment: [String: String]) throws {
        var values: [String: String] = [:]
        var remaining = arguments[...]
        while let argument = remaining.popFirst() {
            guard argument.hasPrefix("--"), let value = remaining.popFirst() else {
                throw Invalid(description: "expected --name value, got \(argument)")
            }
            values[String(argument.dropFirst(2))] = value
        }
        func value(_ name: String) -> String? {
            if let value = values.removeValue(forKey: name) { return value }
            let variable = "COURIER_SERVICE_" + name.uppercased().replacingOccurrences(of: "-", with: "_")
            return environment[variable].flatMap { $0.isEmpty ? nil : $0 }
        }
        func required(_ name: String) throws -> String {
            guard let value = value(name) else { throw Invalid(description: "missing --\(name)") }
            return value
        }
        func url(_ name: String) throws -> URL {
            let text = try required(name)
            guard let url = URL(string: text), url.scheme == "https", url.host != nil else {
                throw Invalid(description: "--\(name) must be an https URL, got \(text)")
            }
            return url
        }

        host = value("host") ?? "127.0.0.1"
        let portText = value("port") ?? "8080"
        guard let port = Int(portText), (0...65535).contains(port) else {
            throw Invalid(description: "--port must be 0…65535, got \(portText)")
        }
        self.port = port

        let resourceBaseURL = try url("resource-base-url")
        let authorizationServer = try url("authorization-server")
        let caBundle = try required("ca-bundle")
        let pins = try (value("pins") ?? "").split(separator: ",").map { try SPKIPin(String($0)) }
        // One policy per host: the CA bundle pins the roots, and the SPKI pins, if any, the keys.
        var trust: [TrustPolicy] = []
        for host in Set([resourceBaseURL.host!, authorizationServer.host!]).sorted() {
            trust.append(try TrustPolicy(host: host, pins: pins, pinnedCertificateAuthorities: caBundle))
        }
        access = ResourceAccess.Configuration(
            resourceBaseURL: resourceBaseURL,
            authorizationServer: AuthorizationServer(baseURL: authorizationServer),
            transport: .init(security: try .secured(trust: trust)),  // proxies: http(s)_proxy, no_proxy
            userClient: OAuth2ClientCredentials(
                clientID: try required("user-client-id"),
                clientSecret: try required("user-client-secret")
            ),
            deviceClient: OAuth2ClientCredentials(
                clientID: try required("device-client-id"),
                clientSecret: try required("device-client-secret")
            )
        )
        access.applicationProduct = "CourierService/1.0"
        if let unknown = values.keys.sorted().first {
            throw Invalid(description: "unknown argument --\(unknown)")
        }
    }
}
