import Foundation
import HTTPTypes

/// Removes secrets from what Courier logs.
enum Redaction: Sendable {
    /// What a redacted value is replaced with.
    static let placeholder = "<redacted>"

    /// Header fields whose values are never logged.
    static let sensitiveFields: Set<HTTPField.Name> = [
        .authorization, .proxyAuthorization, .cookie, .setCookie, .dpop,
    ]

    /// Query parameter and form field names whose values are never logged (compared
    /// case-insensitively).
    static let sensitiveParameters: Set<String> = [
        "access_token", "refresh_token", "id_token", "token", "client_secret", "password",
        "code", "code_verifier", "assertion", "client_assertion", "subject_token", "actor_token", "api_key", "apikey",
        "cookie", "set-cookie", "session", "sessionid",
    ]

    /// Whether a header field's value must not be logged: the fields above, and any field
    /// whose name is a sensitive parameter name or mentions a token, secret, password or key.
    static func isSensitive(_ name: HTTPField.Name) -> Bool {
        if sensitiveFields.contains(name) { return true }
        let lowered = name.canonicalName
        if sensitiveParameters.contains(lowered) { return true }
        return ["token", "secret", "password", "api-key", "apikey", "credential"].contains { lowered.contains($0) }
    }

    /// The fields as `Name: value` text, with sensitive values redacted.
    static func fields(_ fields: HTTPFields) -> String {
        fields.map { field in
            let value = isSensitive(field.name) ? placeholder : field.value
            return "\(field.name): \(value)"
        }.joined(separator: ", ")
    }

    /// The request's URL with the values of sensitive query parameters redacted.
    static func url(of request: HTTPRequest) -> String {
        let path = request.path ?? "/"
        let origin = "\(request.scheme ?? "")://\(request.authority ?? "")"
        guard let question = path.firstIndex(of: "?") else { return origin + path }
        let query = path[path.index(after: question)...].split(separator: "&", omittingEmptySubsequences: false).map {
            pair -> String in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let decoded = (name.removingPercentEncoding ?? name).lowercased()
            guard parts.count == 2, sensitiveParameters.contains(decoded) else { return String(pair) }
            return "\(name)=\(placeholder)"
        }.joined(separator: "&")
        return origin + path[..<question] + "?" + query
    }

    static func milliseconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let ms = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return String(format: "%.1f", ms)
    }
}
