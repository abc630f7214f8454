import Foundation

@testable import Courier

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// One request to the gateway's `/api/events` (Tests/Servers/oauth/gateway.py), as its
/// `/api/events/stats?key=K` reports it.
struct GatewayEventConnection: Sendable, Decodable {
    /// The first 12 hex digits of the SHA-256 of the bearer token it carried; `nil` without one.
    let token: String?
    /// Its `Last-Event-ID` header; `nil` without one.
    let lastEventID: String?
    /// The status it was answered with (200, 204, 401, …).
    let status: Int?
    /// The token's expiry (seconds since 1970) for a stream that was opened.
    let expiresAt: Double?
    /// Events written to it.
    let events: Int
    /// How its stream ended: `done` (after the last event), `expired` (the token's expiry),
    /// `client_gone`; `nil` while it runs or when no stream was opened.
    let end: String?

    private enum CodingKeys: String, CodingKey {
        case token, status, events, end
        case lastEventID = "last_event_id"
        case expiresAt = "expires_at"
    }
}

extension TestEnvironment {
    /// The requests to the gateway's `/api/events` with `key`, in arrival order.
    func gatewayEventConnections(key: String) async throws -> [GatewayEventConnection] {
        struct Stats: Decodable { let connections: [GatewayEventConnection] }
        guard let gateway else { throw TestServersError(message: "the gateway did not start: \(serviceErrors)") }
        let url = URL(string: gateway.absoluteString + "/api/events/stats?key=\(key)")!
        let (data, _) = try await URLSession.shared.data(from: url)
        return try JSONDecoder().decode(Stats.self, from: data).connections
    }

    /// A `client_credentials` access token of `courier-device` (scope `device`) from the
    /// authorization server's plain port, for requests a test sends to the gateway itself.
    func deviceAccessToken() async throws -> String {
        struct Token: Decodable { let access_token: String }
        guard let oauth else { throw TestServersError(message: "the OAuth2 server did not start: \(serviceErrors)") }
        var request = URLRequest(url: URL(string: oauth.absoluteString + "/oauth/token")!)
        request.httpMethod = "POST"
        request.setValue("application/x-www-form-urlencoded", forHTTPHeaderField: "Content-Type")
        request.httpBody = OAuth2Form.encode([
            ("grant_type", "client_credentials"), ("client_id", "courier-device"), ("client_secret", "device-secret"),
        ])
        let (data, response) = try await URLSession.shared.data(for: request)
        guard (response as? HTTPURLResponse)?.statusCode == 200 else {
            throw TestServersError(message: "the token request answered \(response)")
        }
        return try JSONDecoder().decode(Token.self, from: data).access_token
    }
}
