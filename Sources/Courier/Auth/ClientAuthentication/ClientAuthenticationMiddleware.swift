import Foundation
import HTTPTypes

/// Authenticates the client at the token and revocation endpoints: checks that the request
/// may carry credentials at all, then adds them — HTTP Basic for `client_secret_basic`, a
/// fresh client assertion in the form body for `client_secret_jwt` and `private_key_jwt`.
///
/// It runs inside the token endpoint's session, after the session's own checks — a secured
/// session refuses a request that arrives with `Authorization` already set — so no
/// credential is made, let alone sent, for a host that may not receive one.
///
/// Every request gets its own assertion with its own `jti`. The transport sends a token
/// request again on its own only when none of it reached the server, so a server never
/// sees a `jti` twice.
struct ClientAuthenticationMiddleware: Middleware {
    private let basic: String?
    private let assertion: ClientAssertionJWT?
    let policy: any CredentialPolicy

    /// Creates the middleware.
    ///
    /// - Parameters:
    ///   - client: The client and how it authenticates.
    ///   - tokenEndpoint: The token endpoint, the assertions' audience unless the client
    ///     names another.
    ///   - policy: Where client credentials may go.
    init(client: OAuth2ClientCredentials, tokenEndpoint: URL, policy: any CredentialPolicy) {
        self.basic =
            client.assertion == nil && client.authentication == .basic
            ? OAuth2Form.basicCredentials(clientID: client.clientID, clientSecret: client.clientSecret ?? "") : nil
        self.assertion = client.assertionSigner.map {
            ClientAssertionJWT(
                signer: $0,
                clientID: client.clientID,
                audience: client.assertionAudience ?? tokenEndpoint.absoluteString
            )
        }
        self.policy = policy
    }

    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        try policy.checkCredentialTarget(request)
        var request = request
        var body = body
        if let basic { request.headerFields[.authorization] = basic }
        if let assertion {
            var form = Data()
            if let body {
                guard case .data(let data) = body.storage else {
                    throw CourierError.invalidBody("a client assertion is added only to a form held in memory")
                }
                form = data
            }
            let fields = OAuth2Form.encode([
                ("client_assertion_type", ClientAssertionJWT.assertionType),
                ("client_assertion", try assertion.make()),
            ])
            if !form.isEmpty { form.append(UInt8(ascii: "&")) }
            form.append(fields)
            body = .data(form)
        }
        return try await next(request, body, context)
    }
}
