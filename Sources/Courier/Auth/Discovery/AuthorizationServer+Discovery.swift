public import Foundation
import HTTPTypes
public import Logging

extension AuthorizationServer {
    /// Finds an authorization server's endpoints from its issuer identifier: RFC 8414
    /// metadata (`/.well-known/oauth-authorization-server`), or OpenID Connect Discovery
    /// (`/.well-known/openid-configuration`) when the server has no RFC 8414 document.
    ///
    /// The document is fetched through `transport` like any request that could carry a
    /// credential: the issuer must be HTTPS and in the transport's trust set. It is accepted
    /// only when
    /// - its `issuer` is exactly `issuer` (RFC 8414 §3.3): a document that names another
    ///   issuer could send your credentials to someone else's endpoints;
    /// - it has a `token_endpoint`, and every endpoint it names is an absolute HTTPS URL on a
    ///   host of the trust set, so that client credentials go nowhere the transport would
    ///   not send them anyway.
    ///
    /// An endpoint the document also names in `mtls_endpoint_aliases` (RFC 8705 §5) is
    /// replaced by its alias when the transport presents a client certificate to the alias's
    /// host: a client that authenticates its connections with a certificate talks to the
    /// server's mutual-TLS endpoints. ``issuesCertificateBoundTokens`` is read from
    /// `tls_client_certificate_bound_access_tokens`.
    ///
    /// An accepted document is kept in `cache` (see ``DiscoveryCache``): discovering the same
    /// issuer again within its `Cache-Control: max-age` costs no request.
    ///
    /// ```swift
    /// let server = try await AuthorizationServer.discover(
    ///     issuer: URL(string: "https://login.example.com")!,
    ///     transport: transport
    /// )
    /// ```
    ///
    /// - Parameters:
    ///   - issuer: The issuer identifier: an HTTPS URL without query or fragment.
    ///   - transport: The transport to fetch through, usually the one ``ResourceAccess`` uses;
    ///     its ``Transport/security`` must be secured and trust the issuer's host.
    ///   - cache: Where documents are kept; ``DiscoveryCache/shared`` by default.
    ///   - logger: Where to log the fetch; nothing is logged by default.
    /// - Returns: The endpoints, with ``issuer`` and ``supportedClientAuthentications`` set.
    /// - Throws: ``CourierError``: ``CourierError/Kind/invalidConfiguration`` for a document
    ///   that names another issuer, has no token endpoint or is not JSON;
    ///   ``CourierError/Kind/untrustedHost`` or ``CourierError/Kind/insecureScheme`` for an
    ///   issuer or endpoint the transport may not send credentials to; ``CourierError/Kind/clientError``
    ///   or ``CourierError/Kind/serverError`` when the server has no document; the transport's
    ///   error when the server cannot be reached. `CancellationError` when cancelled.
    public static func discover(
        issuer: URL,
        transport: any Transport,
        cache: DiscoveryCache = .shared,
        logger: Logger? = nil
    ) async throws -> AuthorizationServer {
        let identifier = issuer.absoluteString
        guard issuer.query == nil, issuer.fragment == nil else {
            throw CourierError.invalidURL("the issuer \(identifier) has a query or fragment (RFC 8414 §2)")
        }
        try check(issuer, as: "issuer", for: identifier, security: transport.security)
        if let metadata = cache.metadata(for: identifier) {
            return try server(from: metadata, issuer: identifier, security: transport.security)
        }
        let session = Session(
            configuration: .init(maximumRedirects: 0, maximumResponseBodySize: 1 << 20),
            transport: transport
        )
        var response = try await fetch(wellKnownURL(issuer, oauth: true), session: session, logger: logger)
        if response.status.code == 404 {
            response = try await fetch(wellKnownURL(issuer, oauth: false), session: session, logger: logger)
        }
        _ = try response.validate()
        let metadata: AuthorizationServerMetadata
        do {
            metadata = try JSONDecoder().decode(AuthorizationServerMetadata.self, from: response.data)
        } catch {
            throw CourierError(
                kind: .invalidConfiguration,
                message: "the metadata of \(identifier) is not a JSON object with an issuer and a token_endpoint",
                underlying: error
            )
        }
        let server = try server(from: metadata, issuer: identifier, security: transport.security)
        cache.store(metadata, for: identifier, cacheControl: response.headerFields[.cacheControl])
        return server
    }

    /// The metadata URL: RFC 8414 §3.1 puts the well-known segment between the host and the
    /// issuer's path; OpenID Connect Discovery §4 appends it to the issuer.
    static func wellKnownURL(_ issuer: URL, oauth: Bool) -> URL {
        var components = URLComponents(url: issuer, resolvingAgainstBaseURL: false) ?? URLComponents()
        var path = components.percentEncodedPath
        while path.hasSuffix("/") { path.removeLast() }
        components.percentEncodedPath =
            oauth ? "/.well-known/oauth-authorization-server" + path : path + "/.well-known/openid-configuration"
        return components.url ?? issuer
    }

    private static func fetch(_ url: URL, session: Session, logger: Logger?) async throws -> Response {
        let path = URLComponents(url: url, resolvingAgainstBaseURL: false)?.percentEncodedPath ?? url.path
        var request = HTTPRequest(
            method: .get,
            scheme: url.scheme,
            authority: Authority(url: url)?.description,
            path: path.isEmpty ? "/" : path
        )
        request.headerFields[.accept] = "application/json"
        return try await session.send(request, logger: logger)
    }

    /// The endpoints of an accepted document, or the reason it is not accepted.
    private static func server(
        from metadata: AuthorizationServerMetadata,
        issuer: String,
        security: SecurityConfiguration
    ) throws -> AuthorizationServer {
        guard metadata.issuer == issuer else {
            throw CourierError.invalidConfiguration(
                "the metadata of \(issuer) names the issuer \(metadata.issuer); RFC 8414 §3.3 requires the same, "
                    + "so none of its endpoints is used"
            )
        }
        var urls: [String: URL] = [:]
        for (name, value) in metadata.endpoints {
            guard let url = URL(string: value), url.host != nil else {
                throw CourierError.invalidConfiguration("the \(name) of \(issuer) is not an absolute URL: \(value)")
            }
            try check(url, as: name, for: issuer, security: security)
            urls[name] = try alias(of: name, in: metadata, issuer: issuer, security: security) ?? url
        }
        var server = AuthorizationServer(
            tokenEndpoint: urls["token_endpoint"]!,
            authorizationEndpoint: urls["authorization_endpoint"],
            revocationEndpoint: urls["revocation_endpoint"]
        )
        server.issuer = URL(string: issuer)
        server.introspectionEndpoint = urls["introspection_endpoint"]
        server.issuesCertificateBoundTokens = metadata.tlsClientCertificateBoundAccessTokens ?? false
        server.supportedClientAuthentications = metadata.tokenEndpointAuthMethodsSupported.map {
            Set($0.map(OAuth2ClientCredentials.AuthenticationMethod.init(rawValue:)))
        }
        return server
    }

    /// The endpoint a client with a certificate uses instead of `name` (RFC 8705 §5): the
    /// document's alias, when the transport presents a client certificate to the alias's host;
    /// `nil` otherwise, and the endpoint itself is used.
    private static func alias(
        of name: String,
        in metadata: AuthorizationServerMetadata,
        issuer: String,
        security: SecurityConfiguration
    ) throws -> URL? {
        guard let value = metadata.mtlsEndpointAliases?[name], let url = URL(string: value), let host = url.host,
            security.trustPolicy(forHost: host, port: url.port ?? 443)?.presentsClientCertificate == true
        else { return nil }
        try check(url, as: "mtls_endpoint_aliases \(name)", for: issuer, security: security)
        return url
    }

    /// Throws unless `url` may receive credentials through a transport with `security`.
    private static func check(_ url: URL, as name: String, for issuer: String, security: SecurityConfiguration) throws {
        do {
            try security.checkCredentialTarget(url)
        } catch let error as CourierError {
            throw CourierError(
                kind: error.kind,
                message: "the \(name) \(ErrorText.url(url)) of \(issuer) may not receive credentials: \(error.message)",
                host: error.host
            )
        }
    }
}
