import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The authorization server's admin routes, over its plain loopback port: test code only,
/// never Courier.
struct OAuthAdmin: Sendable {
    /// The authorization server's plain HTTP address.
    let base: URL

    /// `POST /admin/lifetime?seconds=N`: tokens issued from now on live N seconds.
    func setLifetime(seconds: Int) async throws {
        _ = try await call("POST", "/admin/lifetime?seconds=\(seconds)")
    }

    /// `POST /admin/token-fault`: what the token endpoint does instead of answering at once:
    /// `none`, or `slow` (it waits `delayMilliseconds` first).
    func setTokenFault(_ mode: String, delayMilliseconds: Int = 0) async throws {
        _ = try await call("POST", "/admin/token-fault?mode=\(mode)&delay_ms=\(delayMilliseconds)")
    }

    /// `GET /admin/stats`: counters, among them `refresh_reuse_detected` and `failed_grants`.
    func stats() async throws -> [String: Any] {
        try await call("GET", "/admin/stats")
    }

    /// When the server saw each token request after `since` (its own clock, seconds since
    /// 1970), oldest first, and the server's time now.
    func tokenRequestTimes(since: Double = 0) async throws -> (times: [Double], now: Double) {
        let answer = try await call("GET", "/admin/token-requests")
        let times = (answer["times"] as? [Double]) ?? []
        return (times.filter { $0 > since }.sorted(), answer["now"] as? Double ?? 0)
    }

    private func call(_ method: String, _ path: String) async throws -> [String: Any] {
        var request = URLRequest(url: URL(string: base.absoluteString + path)!)
        request.httpMethod = method
        request.timeoutInterval = 10
        let (data, response) = try await URLSession.shared.data(for: request)
        guard let status = (response as? HTTPURLResponse)?.statusCode, (200..<300).contains(status) else {
            throw TestSetupError(message: "\(method) \(path): \(String(decoding: data, as: UTF8.self))")
        }
        return (try JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
    }
}
