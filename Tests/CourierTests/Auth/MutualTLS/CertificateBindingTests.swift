import Foundation
import Testing

@testable import Courier

/// The pure parts of certificate-bound tokens: the `cnf` claim of a JWT access token, the
/// binding a token record keeps, and the metadata members that announce binding and aliases.
struct CertificateBindingTests {
    /// A JWS with `claims` as its payload; the signature is not checked by the client.
    func jwt(_ claims: String) -> String {
        Base64URL.encode(Data(#"{"alg":"ES256","typ":"at+jwt"}"#.utf8)) + "."
            + Base64URL.encode(Data(claims.utf8)) + ".c2lnbmF0dXJl"
    }

    @Test func theConfirmationOfAJWTIsItsCertificateThumbprint() {
        // The claims of RFC 8705 §3.1's example.
        let token = jwt(
            #"{"iss":"https://server.example.com","sub":"ty.webb@example.com","exp":1493726400,"#
                + #""nbf":1493722800,"cnf":{"x5t#S256":"bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"}}"#
        )
        #expect(CertificateConfirmation.thumbprint(of: token) == "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2")
    }

    @Test(arguments: [
        "opaque-token-value",
        "a.b",
        "a.b.c.d",
        "header.!!!.signature",
    ])
    func aTokenThatIsNotAJWTConfirmsNothing(_ token: String) {
        #expect(CertificateConfirmation.thumbprint(of: token) == nil)
    }

    @Test func aJWTWithoutACertificateConfirmsNothing() {
        #expect(CertificateConfirmation.thumbprint(of: jwt(#"{"sub":"x"}"#)) == nil)
        #expect(CertificateConfirmation.thumbprint(of: jwt(#"{"cnf":{"jkt":"abc"}}"#)) == nil)
        #expect(CertificateConfirmation.thumbprint(of: jwt(#"{"cnf":{"x5t#S256":""}}"#)) == nil)
        #expect(CertificateConfirmation.thumbprint(of: jwt(#"{"cnf":{"x5t#S256":7}}"#)) == nil)
        #expect(CertificateConfirmation.thumbprint(of: jwt(#"["cnf"]"#)) == nil)
    }

    @Test func aStoredTokenKeepsItsCertificate() throws {
        var token = OAuth2Token(accessToken: "at", expiresAt: Date(timeIntervalSince1970: 2_000_000_000))
        token.certificateThumbprint = "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"
        let decoded = try JSONDecoder().decode(OAuth2Token.self, from: JSONEncoder().encode(token))
        #expect(decoded.certificateThumbprint == token.certificateThumbprint)
        #expect(decoded == token)
        #expect(token.description.contains("x5t#S256 bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"))
        #expect(!token.description.contains("\"at\""))
        // A record written before certificate binding reads as bound to no certificate.
        let old = try JSONDecoder().decode(
            OAuth2Token.self,
            from: Data(#"{"accessToken":"at","additionalFields":{},"issuedAt":0,"tokenType":"Bearer"}"#.utf8)
        )
        #expect(old.certificateThumbprint == nil)
    }

    @Test func aTokenHandedOutHasNoGeneratedKey() throws {
        let key = DPoPKey.generate()
        var token = OAuth2Token(accessToken: "at", tokenType: .dpop)
        token.keyThumbprint = key.thumbprint
        token.generatedKey = StoredDPoPKey(key)
        let handedOut = token.handedOut
        #expect(handedOut.generatedKey == nil)
        #expect(handedOut.keyThumbprint == key.thumbprint)
        let encoded = String(decoding: try JSONEncoder().encode(handedOut), as: UTF8.self)
        #expect(!encoded.contains("privateKey"))
        #expect(!encoded.contains("generatedKey"))
    }

    @Test func metadataAnnouncesBindingAndAliases() throws {
        let document = #"""
            {"issuer":"https://as.example","token_endpoint":"https://as.example/token",
             "tls_client_certificate_bound_access_tokens":true,
             "mtls_endpoint_aliases":{"token_endpoint":"https://mtls.as.example/token"}}
            """#
        let metadata = try JSONDecoder().decode(AuthorizationServerMetadata.self, from: Data(document.utf8))
        #expect(metadata.tlsClientCertificateBoundAccessTokens == true)
        #expect(metadata.mtlsEndpointAliases == ["token_endpoint": "https://mtls.as.example/token"])
        let plain = try JSONDecoder().decode(
            AuthorizationServerMetadata.self,
            from: Data(#"{"issuer":"https://as.example","token_endpoint":"https://as.example/token"}"#.utf8)
        )
        #expect(plain.tlsClientCertificateBoundAccessTokens == nil)
        #expect(plain.mtlsEndpointAliases == nil)
    }

    @Test func aDigestIsTheSHA256AThumbprintNames() {
        // RFC 8705 §3.1's example thumbprint.
        let thumbprint = "bwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"
        let digest = CertificateDigest(thumbprint: thumbprint)
        #expect(digest == CertificateDigest(thumbprint: thumbprint))
        #expect(digest != CertificateDigest(thumbprint: "AwcK0esc3ACC3DB2Y5_lESsXE8o9ltc05O89jdN-dg2"))
        // What names no SHA-256 requires a certificate no connection presents.
        let nothing = CertificateDigest(thumbprint: "")
        #expect(CertificateDigest(thumbprint: "not base64url!") == nothing)
        #expect(CertificateDigest(thumbprint: "AAAA") == nothing)
        #expect(digest != nothing)
    }
}
