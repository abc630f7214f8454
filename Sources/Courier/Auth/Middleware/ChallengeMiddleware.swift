import Crypto
import Foundation
public import HTTPTypes
import Logging

/// A username and password given in answer to an HTTP authentication challenge.
///
/// The `description` never shows the password.
public struct ChallengeCredential: Sendable, Hashable, CustomStringConvertible {
    /// The user name.
    public var user: String
    /// The password.
    public var password: String

    /// Creates a credential.
    ///
    /// - Parameters:
    ///   - user: The user name.
    ///   - password: The password.
    public init(user: String, password: String) {
        self.user = user
        self.password = password
    }

    /// The user, never the password.
    public var description: String { "ChallengeCredential(\(user), password \(Redaction.placeholder))" }
}

/// What a ``ChallengeCredentialProvider`` is asked about.
public struct ChallengeContext: Sendable {
    /// The challenge Courier will answer: the strongest it supports (Digest SHA-256, then
    /// Digest MD5, then Basic).
    let challenge: AuthenticationChallenge
    /// The scheme of the challenge Courier will answer: `Digest` or `Basic`.
    public var scheme: String { challenge.scheme }
    /// The challenge's `realm`, when it names one.
    public var realm: String? { challenge.realm }
    /// The challenge's auth parameters (`realm`, `qop`, `algorithm`, …), names in lower case.
    public var parameters: [String: String] { challenge.parameters }
    /// The request that was challenged, without its `Authorization` field.
    public let request: HTTPRequest
    /// The host that challenged.
    public let host: String
}

/// Supplies credentials for HTTP authentication challenges .
///
/// Return `nil` to leave the 401 to the caller. Courier answers at most once per request:
/// credentials that are rejected again give ``CourierError/Kind/challengeFailed``, never a loop.
///
/// ```swift
/// struct VaultCredentials: ChallengeCredentialProvider {
///     func credential(for context: ChallengeContext) async throws -> ChallengeCredential? {
///         guard context.realm == "reports" else { return nil }
///         return try await vault.credential(named: "reports")
///     }
/// }
/// ```
public protocol ChallengeCredentialProvider: Sendable {
    /// The credential for a challenge, or `nil` to not answer it.
    ///
    /// - Parameter context: The challenge and the request.
    /// - Returns: The credential.
    /// - Throws: Any error; it reaches the caller of the request.
    func credential(for context: ChallengeContext) async throws -> ChallengeCredential?
}

/// A credential provider made from a closure.
struct AnyChallengeCredentialProvider: ChallengeCredentialProvider {
    private let body: @Sendable (ChallengeContext) async throws -> ChallengeCredential?

    /// Creates a provider.
    ///
    /// - Parameter body: Returns the credential for a challenge, or `nil`.
    init(_ body: @escaping @Sendable (ChallengeContext) async throws -> ChallengeCredential?) {
        self.body = body
    }

    /// Runs the closure.
    func credential(for context: ChallengeContext) async throws -> ChallengeCredential? {
        try await body(context)
    }
}

/// Answers `401` challenges for `Basic` (RFC 7617) and `Digest` (RFC 7616) authentication
/// with credentials from the app, and restarts the request once.
///
/// - The challenge answered is the strongest supported one: Digest with SHA-256, Digest
///   with MD5, then Basic. Digest uses `qop=auth` (or the RFC 2069 form when the server
///   offers no qop); a challenge offering only `auth-int` is not answered.
/// - Credentials go only where tokens may go: HTTPS to trusted hosts. A challenge from
///   another host is left to the caller.
/// - A body that cannot be replayed is not resent.
/// - When the restarted request is challenged again with the same scheme, the credentials
///   were wrong: ``CourierError/Kind/challengeFailed`` (with the status and endpoint), not
///   another attempt. A Digest answer marked `stale` gets one more try with the new nonce.
struct ChallengeMiddleware: Middleware {
    let provider: any ChallengeCredentialProvider
    let policy: any CredentialPolicy

    init(provider: any ChallengeCredentialProvider, policy: any CredentialPolicy) {
        self.provider = provider
        self.policy = policy
    }

    /// Sends the request, and answers a supported challenge once.
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        let response = try await next(request, body, context)
        guard response.status.code == 401 else { return response }
        return try await answer(response, of: request, body: body, context: context, next: next)
    }

    /// Answers the challenge of a 401 `response`, or returns it when it cannot be answered.
    /// Never inlined: its state would enlarge the frame that every request in flight keeps,
    /// challenged or not.
    @inline(never)
    private func answer(
        _ response: Response,
        of request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        let challenges = try AuthenticationChallenge.checkedChallenges(in: response.headerFields)
        guard let challenge = Self.strongest(challenges), body?.isReplayable ?? true else { return response }
        guard (try? policy.checkCredentialTarget(request)) != nil,
            let authority = request.authority.flatMap({ try? Authority($0) })
        else {
            context.logger.debug("401 challenge from a host that may not receive credentials: not answered")
            return response
        }
        var plain = request
        plain.headerFields[.authorization] = nil
        plain.headerFields[.dpop] = nil
        let host = authority.host
        guard
            let credential = try await provider.credential(
                for: ChallengeContext(challenge: challenge, request: plain, host: host)
            )
        else { return response }

        var attempt = context
        var current = challenge
        for round in 0..<2 {
            guard let value = Self.authorization(for: current, credential: credential, request: request) else {
                return response
            }
            var answered = request
            answered.headerFields[.authorization] = value
            answered.headerFields[.dpop] = nil  // a proof goes only with the token it was made for
            attempt.attempt += 1
            let restarted = try await next(answered, body, attempt)
            guard restarted.status.code == 401 else { return restarted }
            let again = AuthenticationChallenge.challenges(in: restarted.headerFields)
            guard let repeated = again.first(where: { $0.hasScheme(current.scheme) }) else { return restarted }
            // A stale Digest nonce is not a wrong password: answer the new nonce once.
            if round == 0, repeated.hasScheme("Digest"), repeated.parameters["stale"]?.lowercased() == "true" {
                current = repeated
                continue
            }
            // The endpoint is the session's, as the caller wrote the request: the same in
            // every environment, whatever the base URL's path.
            throw CourierError(
                kind: .challengeFailed,
                message:
                    "the \(current.scheme) credentials for realm \"\(current.realm ?? "")\" at \(host) were rejected",
                statusCode: 401
            )
        }
        return response
    }

    // MARK: Schemes

    /// The strongest challenge Courier can answer.
    static func strongest(_ challenges: [AuthenticationChallenge]) -> AuthenticationChallenge? {
        func rank(_ challenge: AuthenticationChallenge) -> Int? {
            if challenge.hasScheme("Basic") { return 0 }
            guard challenge.hasScheme("Digest"), challenge.parameters["nonce"] != nil,
                DigestAuthentication.qop(of: challenge) != .unsupported
            else { return nil }
            switch DigestAuthentication.Algorithm(challenge.parameters["algorithm"]) {
            case .md5, .md5Session: return 1
            case .sha256, .sha256Session: return 2
            case nil: return nil
            }
        }
        return challenges.compactMap { challenge in rank(challenge).map { (challenge, $0) } }
            .max { $0.1 < $1.1 }?.0
    }

    /// The `Authorization` value answering a challenge.
    static func authorization(
        for challenge: AuthenticationChallenge,
        credential: ChallengeCredential,
        request: HTTPRequest
    ) -> String? {
        if challenge.hasScheme("Basic") {
            // RFC 7617 §2.1: UTF-8 when the server says charset="UTF-8", and in practice always.
            return "Basic " + Data("\(credential.user):\(credential.password)".utf8).base64EncodedString()
        }
        return DigestAuthentication.authorization(
            challenge: challenge,
            credential: credential,
            method: request.method.rawValue,
            uri: request.path ?? "/",
            clientNonce: OAuth2Form.base64URL(OAuth2Form.randomBytes(12)),
            nonceCount: 1
        )
    }
}

/// HTTP Digest access authentication (RFC 7616), the client side.
enum DigestAuthentication {
    enum Algorithm: Equatable {
        case md5, md5Session, sha256, sha256Session

        /// The algorithm named by the challenge; a missing name is MD5 (RFC 7616 §3.3).
        init?(_ name: String?) {
            switch (name ?? "MD5").uppercased() {
            case "MD5": self = .md5
            case "MD5-SESS": self = .md5Session
            case "SHA-256": self = .sha256
            case "SHA-256-SESS": self = .sha256Session
            default: return nil
            }
        }

        var name: String {
            switch self {
            case .md5: "MD5"
            case .md5Session: "MD5-sess"
            case .sha256: "SHA-256"
            case .sha256Session: "SHA-256-sess"
            }
        }

        var isSession: Bool { self == .md5Session || self == .sha256Session }

        func hash(_ text: String) -> String {
            let data = Data(text.utf8)
            switch self {
            case .md5, .md5Session: return Insecure.MD5.hash(data: data).map { String(format: "%02x", $0) }.joined()
            case .sha256, .sha256Session: return SHA256.hash(data: data).map { String(format: "%02x", $0) }.joined()
            }
        }
    }

    enum QualityOfProtection: Equatable {
        case none, auth, unsupported
    }

    static func qop(of challenge: AuthenticationChallenge) -> QualityOfProtection {
        guard let offered = challenge.parameters["qop"] else { return .none }
        let options = offered.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
        return options.contains("auth") ? .auth : .unsupported
    }

    static func authorization(
        challenge: AuthenticationChallenge,
        credential: ChallengeCredential,
        method: String,
        uri: String,
        clientNonce: String,
        nonceCount: Int
    ) -> String? {
        guard let algorithm = Algorithm(challenge.parameters["algorithm"]), let nonce = challenge.parameters["nonce"]
        else {
            return nil
        }
        let qop = qop(of: challenge)
        guard qop != .unsupported else { return nil }
        let realm = challenge.realm ?? ""
        let nc = String(format: "%08x", nonceCount)
        var ha1 = algorithm.hash("\(credential.user):\(realm):\(credential.password)")
        if algorithm.isSession { ha1 = algorithm.hash("\(ha1):\(nonce):\(clientNonce)") }
        let ha2 = algorithm.hash("\(method):\(uri)")
        let response =
            qop == .auth
            ? algorithm.hash("\(ha1):\(nonce):\(nc):\(clientNonce):auth:\(ha2)")
            : algorithm.hash("\(ha1):\(nonce):\(ha2)")
        var parts = [
            "username=\(quoted(credential.user))", "realm=\(quoted(realm))", "nonce=\(quoted(nonce))",
            "uri=\(quoted(uri))", "algorithm=\(algorithm.name)", "response=\(quoted(response))",
        ]
        if qop == .auth { parts += ["qop=auth", "nc=\(nc)", "cnonce=\(quoted(clientNonce))"] }
        if let opaque = challenge.parameters["opaque"] { parts.append("opaque=\(quoted(opaque))") }
        return "Digest " + parts.joined(separator: ", ")
    }

    static func quoted(_ value: String) -> String {
        "\"" + value.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
