#if Postgres
import Courier
import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The authorization server's admin routes and token endpoint, over its plain loopback port:
/// test code only, never Courier.
struct OAuthAdmin: Sendable {
    let base: URL

    /// `POST /admin/lifetime?seconds=N`: tokens issued from now on live N seconds.
    func setLifetime(seconds: Int) async throws {
        _ = try await call("POST", "/admin/lifetime?seconds=\(seconds)")
    }

    /// `POST /admin/reset`: the counters and the token request times start again from zero.
    func reset() async throws {
        _ = try await call("POST", "/admin/reset")
    }

    /// `POST /admin/token-fault`: what the token endpoint does instead of answering normally
    /// (`none`, or `slow` with a delay).
    func setTokenFault(_ mode: String, delayMilliseconds: Int = 0) async throws {
        _ = try await call("POST", "/admin/token-fault?mode=\(mode)&delay_ms=\(delayMilliseconds)")
    }

    /// `GET /admin/stats`.
    func stats() async throws -> [String: Any] {
        try await call("GET", "/admin/stats")
    }

    /// `GET /admin/token-requests`: when each token request since the last reset arrived.
    func tokenRequestTimes() async throws -> [Double] {
        try await call("GET", "/admin/token-requests")["times"] as? [Double] ?? []
    }

    /// A password grant for `username`, as a token Courier would have stored.
    func passwordGrant(username: String, password: String) async throws -> OAuth2Token {
        let form = "grant_type=password&username=\(username)&password=\(password)&scope=read%20write%20profile"
        let json = try await call(
            "POST",
            "/oauth/token",
            body: Data(form.utf8),
            headers: [
                "Content-Type": "application/x-www-form-urlencoded",
                "Authorization": "Basic " + Data("courier-user:user-secret".utf8).base64EncodedString(),
            ]
        )
        guard let access = json["access_token"] as? String, let lifetime = json["expires_in"] as? Int else {
            throw ServersError("no token in the password grant's answer")
        }
        let issued = Date()
        return OAuth2Token(
            accessToken: access,
            issuedAt: issued,
            expiresAt: issued.addingTimeInterval(Double(lifetime)),
            refreshToken: json["refresh_token"] as? String,
            scope: Set(((json["scope"] as? String) ?? "").split(separator: " ").map { Scope(rawValue: String($0)) })
        )
    }

    private func call(
        _ method: String,
        _ path: String,
        body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        request.httpMethod = method
        request.httpBody = body
        request.timeoutInterval = 10
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
            throw ServersError("\(method) \(path): \(String(decoding: data, as: UTF8.self))")
        }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}
#endif
