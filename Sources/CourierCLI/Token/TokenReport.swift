#if CommandLine
import Courier
import Foundation

/// What `courier token` prints: the type, scope and expiry of a token, and the token itself
/// only when asked.
struct TokenReport {
    let token: OAuth2Token
    let showsToken: Bool

    func text(now: Date) -> String {
        var lines = ["token_type    \(token.tokenType)"]
        let scope = token.scope.map { $0.map(\.rawValue).sorted().joined(separator: " ") }
        lines.append("scope         \(scope ?? "(as the server chose)")")
        if let expiresAt = token.expiresAt {
            let seconds = Int(expiresAt.timeIntervalSince(now).rounded())
            lines.append("expires_in    \(seconds) s (\(ISO8601DateFormatter().string(from: expiresAt)))")
        } else {
            lines.append("expires_in    (not given)")
        }
        lines.append("refresh_token \(token.refreshToken == nil ? "no" : "yes")")
        lines.append("access_token  \(showsToken ? token.accessToken : "<redacted: --show prints it>")")
        return lines.joined(separator: "\n") + "\n"
    }
}
#endif
