import HTTPTypes

/// One challenge of a `WWW-Authenticate` field (RFC 9110 §11.6.1): a scheme with either
/// parameters or a token68.
///
/// ```swift
/// let challenges = AuthenticationChallenge.challenges(in: response.headerFields)
/// // WWW-Authenticate: Bearer realm="courier", error="invalid_token"
/// challenges.first?.scheme                 // "Bearer"
/// challenges.first?.parameters["error"]    // "invalid_token"
/// ```
struct AuthenticationChallenge: Sendable, Hashable, CustomStringConvertible {
    /// The scheme as sent, such as `Basic`, `Digest` or `Bearer`. Compare with
    /// ``hasScheme(_:)``, which ignores case.
    let scheme: String
    /// The parameters by lower-cased name; quoted values are unquoted.
    let parameters: [String: String]
    /// The token68 value of a scheme that uses one instead of parameters.
    let token68: String?

    /// Creates a challenge.
    ///
    /// - Parameters:
    ///   - scheme: The scheme.
    ///   - parameters: The parameters; names are lower-cased.
    ///   - token68: The token68 value.
    init(scheme: String, parameters: [String: String] = [:], token68: String? = nil) {
        self.scheme = scheme
        var lowered: [String: String] = [:]
        for (name, value) in parameters { lowered[name.lowercased()] = value }
        self.parameters = lowered
        self.token68 = token68
    }

    /// Whether the scheme is `scheme`, ignoring case.
    ///
    /// - Parameter scheme: The scheme, such as `"basic"`.
    func hasScheme(_ scheme: String) -> Bool { self.scheme.lowercased() == scheme.lowercased() }

    /// The `realm` parameter.
    var realm: String? { parameters["realm"] }

    /// The scheme and parameter names (values may be sensitive, such as a nonce).
    var description: String {
        "\(scheme)(\(parameters.keys.sorted().joined(separator: ", ")))"
    }

    /// The most challenges Courier reads from one response. A server that sends more is
    /// refused: no real server offers more than a handful of schemes, and each one read
    /// costs work and memory.
    static let maximumChallenges = 16

    /// The most parameters Courier reads from one challenge (a Digest challenge has seven).
    static let maximumParameters = 32

    /// The challenges of every `WWW-Authenticate` field, in order.
    ///
    /// Reading stops one past ``maximumChallenges`` challenges, and a challenge keeps at most
    /// one parameter more than ``maximumParameters``, so a hostile field costs bounded work;
    /// ``checkedChallenges(in:)`` turns going past a limit into an error.
    ///
    /// - Parameter fields: The response's header fields.
    /// - Returns: The challenges; malformed parts are skipped.
    static func challenges(in fields: HTTPFields) -> [AuthenticationChallenge] {
        var result: [AuthenticationChallenge] = []
        for value in fields[values: .wwwAuthenticate] {
            result += parse(value, limit: maximumChallenges + 1 - result.count)
            if result.count > maximumChallenges { break }
        }
        return result
    }

    /// The challenges of every `WWW-Authenticate` field, or an error when the response goes
    /// past ``maximumChallenges`` or a challenge past ``maximumParameters``.
    ///
    /// - Parameter fields: The response's header fields.
    /// - Returns: The challenges; malformed parts are skipped.
    /// - Throws: ``CourierError/Kind/challengeFailed``.
    static func checkedChallenges(in fields: HTTPFields) throws -> [AuthenticationChallenge] {
        let challenges = challenges(in: fields)
        if challenges.count > maximumChallenges {
            throw CourierError(
                kind: .challengeFailed,
                message: "the response has more than \(maximumChallenges) authentication challenges",
                statusCode: 401
            )
        }
        if let crowded = challenges.first(where: { $0.parameters.count > maximumParameters }) {
            throw CourierError(
                kind: .challengeFailed,
                message: "the \(crowded.scheme) challenge has more than \(maximumParameters) parameters",
                statusCode: 401
            )
        }
        return challenges
    }

    /// The challenges of one field value.
    ///
    /// The grammar is a comma-separated list that mixes challenges and their parameters:
    /// a new challenge starts with a token that is not followed by `=`.
    ///
    /// - Parameters:
    ///   - value: The field value.
    ///   - limit: Stop after this many challenges.
    /// - Returns: The challenges; each keeps at most one parameter more than
    ///   ``maximumParameters``.
    static func parse(_ value: String, limit: Int = maximumChallenges + 1) -> [AuthenticationChallenge] {
        var scanner = ChallengeScanner(Array(value.utf8))
        var result: [AuthenticationChallenge] = []
        var scheme: String?
        var parameters: [String: String] = [:]
        var token68: String?

        func flush() {
            if let scheme {
                result.append(AuthenticationChallenge(scheme: scheme, parameters: parameters, token68: token68))
            }
            scheme = nil
            parameters = [:]
            token68 = nil
        }

        func keep(_ name: String, _ value: String) {
            if parameters.count <= maximumParameters || parameters[name] != nil { parameters[name] = value }
        }

        while !scanner.atEnd, result.count < limit {
            scanner.skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") || $0 == UInt8(ascii: ",") }
            guard !scanner.atEnd else { break }
            guard let token = scanner.token() else {
                scanner.skipToComma()
                continue
            }
            scanner.skipSpaces()
            if scanner.peek == UInt8(ascii: "="), scheme != nil, !scanner.isToken68Tail {
                // name=value of the current challenge
                scanner.advance()
                scanner.skipSpaces()
                let value = scanner.peek == UInt8(ascii: "\"") ? scanner.quotedString() : (scanner.token() ?? "")
                keep(token.lowercased(), value)
                scanner.skipToComma()
            } else if scanner.peek == UInt8(ascii: "=") && scheme == nil {
                // A parameter with no scheme before it: malformed, skip.
                scanner.skipToComma()
            } else {
                // A new challenge: `scheme`, then maybe token68 or the first parameter.
                flush()
                scheme = token
                scanner.skipSpaces()
                if !scanner.atEnd, scanner.peek != UInt8(ascii: ",") {
                    let mark = scanner.position
                    if let first = scanner.token() {
                        scanner.skipSpaces()
                        if scanner.peek == UInt8(ascii: "="), !scanner.isToken68Tail {
                            scanner.advance()
                            scanner.skipSpaces()
                            let value =
                                scanner.peek == UInt8(ascii: "\"") ? scanner.quotedString() : (scanner.token() ?? "")
                            keep(first.lowercased(), value)
                        } else {
                            scanner.position = mark
                            token68 = scanner.token68()
                        }
                    } else {
                        token68 = scanner.token68()
                    }
                    scanner.skipToComma()
                }
            }
        }
        if result.count < limit { flush() }
        return result
    }
}

/// A byte scanner for challenge lists.
private struct ChallengeScanner {
    let bytes: [UInt8]
    var position = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var atEnd: Bool { position >= bytes.count }
    var peek: UInt8? { atEnd ? nil : bytes[position] }

    mutating func advance() { position += 1 }

    mutating func skip(while predicate: (UInt8) -> Bool) {
        while let byte = peek, predicate(byte) { position += 1 }
    }

    mutating func skipSpaces() { skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") } }

    /// Skips to just after the next comma outside a quoted string.
    mutating func skipToComma() {
        var quoted = false
        while let byte = peek {
            position += 1
            if quoted {
                if byte == UInt8(ascii: "\\") { position += 1 } else if byte == UInt8(ascii: "\"") { quoted = false }
            } else if byte == UInt8(ascii: "\"") {
                quoted = true
            } else if byte == UInt8(ascii: ",") {
                return
            }
        }
    }

    /// Whether the `=` at the position ends a token68 (`abc==`) rather than starting a value:
    /// true when only `=`, spaces, then a comma or the end follow.
    var isToken68Tail: Bool {
        var index = position
        while index < bytes.count, bytes[index] == UInt8(ascii: "=") { index += 1 }
        while index < bytes.count, bytes[index] == UInt8(ascii: " ") || bytes[index] == UInt8(ascii: "\t") {
            index += 1
        }
        return index >= bytes.count || bytes[index] == UInt8(ascii: ",")
    }

    static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        default:
            return Array("!#$%&'*+-.^_`|~".utf8).contains(byte)
        }
    }

    mutating func token() -> String? {
        let start = position
        skip(while: Self.isTokenByte)
        return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
    }

    mutating func token68() -> String? {
        let start = position
        skip { Self.isTokenByte($0) || $0 == UInt8(ascii: "/") }
        skip { $0 == UInt8(ascii: "=") }
        return position > start ? String(decoding: bytes[start..<position], as: UTF8.self) : nil
    }

    mutating func quotedString() -> String {
        advance()  // opening quote
        var value: [UInt8] = []
        while let byte = peek {
            advance()
            if byte == UInt8(ascii: "\\"), let escaped = peek {
                value.append(escaped)
                advance()
            } else if byte == UInt8(ascii: "\"") {
                break
            } else {
                value.append(byte)
            }
        }
        return String(decoding: value, as: UTF8.self)
    }
}

extension AuthenticationChallenge {
    /// Whether a 401 asks for a new bearer token (RFC 6750 §3.1): no challenge at all, or a
    /// Bearer challenge without an error code or with `invalid_token`.
    ///
    /// A Bearer challenge with `insufficient_scope` or `invalid_request` does not: a new token
    /// for the same grant would not change the answer. A 401 that only challenges other
    /// schemes (Basic, Digest) is for the challenge middleware.
    ///
    /// A 401 whose challenges go past Courier's limits does not: it is no ground to renew.
    static func asksForNewBearerToken(_ fields: HTTPFields) -> Bool {
        guard let challenges = try? checkedChallenges(in: fields) else { return false }
        guard !challenges.isEmpty else { return true }
        return challenges.contains { challenge in
            guard challenge.hasScheme("Bearer") else { return false }
            guard let error = challenge.parameters["error"] else { return true }
            return error == OAuth2Error.Code.invalidToken.rawValue
        }
    }

    /// Whether a 401 for a DPoP-bound token asks for a new token: no challenge, or a `DPoP` (or
    /// `Bearer`) challenge without an error or with `invalid_token` (RFC 9449 §7.1). A
    /// `use_dpop_nonce` or `invalid_dpop_proof` challenge does not: a new token would not
    /// change the answer.
    static func asksForNewToken(_ fields: HTTPFields) -> Bool {
        guard let challenges = try? checkedChallenges(in: fields) else { return false }
        guard !challenges.isEmpty else { return true }
        return challenges.contains { challenge in
            guard challenge.hasScheme("DPoP") || challenge.hasScheme("Bearer") else { return false }
            guard let error = challenge.parameters["error"] else { return true }
            return error == OAuth2Error.Code.invalidToken.rawValue
        }
    }

    /// Whether a 401 asks for a proof with the server's nonce: a `DPoP` challenge with
    /// `error="use_dpop_nonce"` (RFC 9449 §9).
    static func asksForDPoPNonce(_ fields: HTTPFields) -> Bool {
        guard let challenges = try? checkedChallenges(in: fields) else { return false }
        return challenges.contains {
            $0.hasScheme("DPoP") && $0.parameters["error"] == OAuth2Error.Code.useDPoPNonce.rawValue
        }
    }
}
