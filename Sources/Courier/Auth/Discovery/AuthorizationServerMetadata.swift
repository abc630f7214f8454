import Foundation

/// The fields of an authorization server's metadata document (RFC 8414 §2, OpenID Connect
/// Discovery §3) that Courier uses.
struct AuthorizationServerMetadata: Sendable, Hashable, Decodable {
    let issuer: String
    let tokenEndpoint: String
    let authorizationEndpoint: String?
    let revocationEndpoint: String?
    let introspectionEndpoint: String?
    let tokenEndpointAuthMethodsSupported: [String]?
    /// RFC 8705 §3.3: whether access tokens issued over mutual TLS are bound to the certificate.
    let tlsClientCertificateBoundAccessTokens: Bool?
    /// RFC 8705 §5: endpoints to use instead when the client authenticates its connection
    /// with a certificate, by metadata name.
    let mtlsEndpointAliases: [String: String]?

    private enum CodingKeys: String, CodingKey {
        case issuer
        case tokenEndpoint = "token_endpoint"
        case authorizationEndpoint = "authorization_endpoint"
        case revocationEndpoint = "revocation_endpoint"
        case introspectionEndpoint = "introspection_endpoint"
        case tokenEndpointAuthMethodsSupported = "token_endpoint_auth_methods_supported"
        case tlsClientCertificateBoundAccessTokens = "tls_client_certificate_bound_access_tokens"
        case mtlsEndpointAliases = "mtls_endpoint_aliases"
    }

    /// The endpoints by metadata name, the token endpoint first.
    var endpoints: [(name: String, value: String)] {
        var endpoints = [("token_endpoint", tokenEndpoint)]
        if let authorizationEndpoint { endpoints.append(("authorization_endpoint", authorizationEndpoint)) }
        if let revocationEndpoint { endpoints.append(("revocation_endpoint", revocationEndpoint)) }
        if let introspectionEndpoint { endpoints.append(("introspection_endpoint", introspectionEndpoint)) }
        return endpoints
    }
}
