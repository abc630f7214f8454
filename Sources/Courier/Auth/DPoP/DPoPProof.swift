import Crypto
import Foundation
import HTTPTypes

/// Makes DPoP proofs (RFC 9449 §4): one JWT per request, signed ES256 with a ``DPoPKey``.
///
/// The header is `{"alg":"ES256","jwk":{…public key…},"typ":"dpop+jwt"}`; the claims are a
/// random `jti` (128 bits), `htm` (the method), `htu` (the target URI without query and
/// fragment), `iat` (whole seconds), and, when they apply, `ath` (the access token's SHA-256,
/// on resource requests) and `nonce` (the server's latest). A proof is made for one send of one
/// request to one URL: each retry, each nonce answer and each renewal makes a new one, and a
/// redirect hop gets none (see `RedirectMiddleware`).
///
/// Proofs are never logged: `DPoP` is a redacted header field.
enum DPoPProof {
    /// Makes a proof.
    ///
    /// - Parameters:
    ///   - key: The key to sign with.
    ///   - method: The request's method (`htm`).
    ///   - targetURI: The request's URI without query and fragment (`htu`), see ``targetURI(of:)``.
    ///   - accessToken: The access token the request carries (for `ath`), `nil` at the token endpoint.
    ///   - nonce: The server's nonce, when it gave one.
    ///   - now: The issue time.
    ///   - jti: The JWT id; 128 fresh random bits by default.
    /// - Returns: The compact serialization `header.claims.signature`.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the key cannot sign.
    static func make(
        key: DPoPKey,
        method: HTTPRequest.Method,
        targetURI: String,
        accessToken: String? = nil,
        nonce: String? = nil,
        now: Date = Date(),
        jti: String = ClientAssertionJWT.randomID()
    ) throws -> String {
        var claims = "{"
        if let accessToken {
            claims += "\"ath\":\"" + Base64URL.encode(Data(SHA256.hash(data: Data(accessToken.utf8)))) + "\","
        }
        claims += "\"htm\":" + jsonString(method.rawValue) + ",\"htu\":" + jsonString(targetURI)
        claims += ",\"iat\":\(Int(now.timeIntervalSince1970)),\"jti\":" + jsonString(jti)
        if let nonce { claims += ",\"nonce\":" + jsonString(nonce) }
        claims += "}"
        let input = key.encodedHeader + "." + Base64URL.encode(Data(claims.utf8))
        let signature: Data
        do {
            signature = try key.sign(Data(input.utf8))
        } catch {
            throw CourierError(
                kind: .invalidConfiguration,
                message: "the DPoP proof could not be signed",
                underlying: error
            )
        }
        return input + "." + Base64URL.encode(signature)
    }

    /// The `htu` of a request (RFC 9449 §4.2, §4.3): scheme and host in lower case, the
    /// scheme's default port left out, the path as sent, without query or fragment.
    ///
    /// - Parameter request: The request, with scheme and authority.
    /// - Returns: The URI, or `nil` when the request has no scheme or no valid authority.
    static func targetURI(of request: HTTPRequest) -> String? {
        origin(of: request).map { targetURI(of: request, at: $0) }
    }

    /// The `htu` of a request whose origin is known.
    static func targetURI(of request: HTTPRequest, at origin: Authority.Origin) -> String {
        var path = Substring(request.path ?? "/")
        if let end = path.firstIndex(where: { $0 == "?" || $0 == "#" }) { path = path[..<end] }
        return origin.description + (path.isEmpty ? "/" : path)
    }

    /// The origin a request goes to: where a nonce is remembered.
    static func origin(of request: HTTPRequest) -> Authority.Origin? {
        guard let scheme = request.scheme, let text = request.authority, let authority = try? Authority(text) else {
            return nil
        }
        return Authority.Origin(scheme: scheme, authority: authority)
    }

    /// `text` as a JSON string literal, quotes included.
    static func jsonString(_ text: String) -> String {
        var result = "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "\\\""
            case "\\": result += "\\\\"
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20:
                result +=
                    "\\u" + String(repeating: "0", count: 4 - String(scalar.value, radix: 16).count)
                    + String(scalar.value, radix: 16)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result + "\""
    }
}
