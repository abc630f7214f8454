#if CommandLine
import Courier
import Foundation
import HTTPTypes

/// RFC 7662 token introspection: asks the server what it knows of a token, with the client's
/// id and secret in the form body, and prints the answer without the token.
enum Introspection {
    /// The fields printed, in this order, when the server returns them.
    static let fields = ["active", "scope", "client_id", "username", "token_type", "sub", "aud", "iss", "exp", "iat"]

    /// Introspects `token` at `endpoint` through `transport`.
    static func report(
        token: String,
        endpoint: URL,
        client: OAuth2ClientCredentials,
        transport: any Transport
    ) async throws -> String {
        var form = [("token", token), ("token_type_hint", "access_token"), ("client_id", client.clientID)]
        if let secret = client.clientSecret { form.append(("client_secret", secret)) }
        let body = form.map { "\(encode($0.0))=\(encode($0.1))" }.joined(separator: "&")
        var configuration = Session.Configuration(maximumRedirects: 0, maximumResponseBodySize: 1 << 20)
        configuration.retryPolicy = .never
        let session = Session(configuration: configuration, transport: transport)
        let request = HTTPRequest(
            method: .post,
            path: endpoint.absoluteString,
            headerFields: [.contentType: "application/x-www-form-urlencoded", .accept: "application/json"]
        )
        let outcome: Result<Response, any Error>
        do {
            outcome = .success(try await session.send(request, body: .string(body)).validate())
        } catch {
            outcome = .failure(error)
        }
        await session.shutdown()
        let response = try outcome.get()
        guard let answer = try? JSONSerialization.jsonObject(with: response.data) as? [String: Any] else {
            throw CommandFailure(ExitStatus.failure, "the introspection endpoint did not answer with a JSON object")
        }
        var lines = ["", "introspection (\(endpoint.absoluteString))"]
        for name in fields {
            guard let value = answer[name] else { continue }
            var text = "\(value)"
            if let flag = value as? Bool { text = flag ? "true" : "false" }
            if ["exp", "iat"].contains(name), let seconds = value as? Double {
                text += " (\(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: seconds))))"
            }
            lines.append(name.padding(toLength: 14, withPad: " ", startingAt: 0) + text)
        }
        return lines.joined(separator: "\n") + "\n"
    }

    private static func encode(_ text: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return text.addingPercentEncoding(withAllowedCharacters: allowed) ?? text
    }
}
#endif
