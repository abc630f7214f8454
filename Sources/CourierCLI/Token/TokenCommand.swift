#if CommandLine
import ArgumentParser
import Courier
import Foundation

/// `courier token`: asks an authorization server for a token with the client credentials or
/// the password grant, and prints what came back — the token itself only with `--show`.
struct TokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Get an OAuth2 token: client credentials or password grant.",
        discussion: """
            The authorization server must be reached over HTTPS; trust a private CA with --cacert \
            or pin it with --pin. The client secret comes from --client-secret-env (default \
            COURIER_CLIENT_SECRET) or a prompt; the password of --password always from a prompt \
            with echo off, never from the command line. The access token is printed only with --show.
            """
    )

    @Option(help: "The issuer: its endpoints are discovered from /.well-known/.")
    var issuer: String?

    @Option(name: .customLong("token-url"), help: "The token endpoint, when there is no discovery.")
    var tokenURL: String?

    @Option(name: .customLong("client-id"), help: "The client id.")
    var clientID: String

    @Option(
        name: .customLong("client-secret-env"),
        help: "The environment variable that holds the client secret (default COURIER_CLIENT_SECRET)."
    )
    var clientSecretVariable: String = "COURIER_CLIENT_SECRET"

    @Flag(name: .customLong("public-client"), help: "A public client: no secret.")
    var publicClient = false

    @Flag(name: .customLong("client-credentials"), help: "The client credentials grant (the default).")
    var clientCredentials = false

    @Option(name: .customLong("password"), help: "The password grant for USERNAME; the password is prompted.")
    var username: String?

    @Option(help: "The scope to ask for, space-separated.")
    var scope: String?

    @Flag(help: "Print the access token itself.")
    var show = false

    @Flag(help: "Ask the server's introspection endpoint (found by --issuer discovery) about the token.")
    var introspect = false

    @Option(name: .customLong("cacert"), help: "A PEM bundle of the CAs to trust instead of the system's.")
    var caBundle: String?

    @Option(name: .customLong("pin"), help: "An SPKI pin the server's chain must hold; repeatable.")
    var pins: [String] = []

    @Flag(name: [.customShort("k"), .customLong("insecure")], help: .hidden)
    var insecure = false

    func validate() throws {
        if insecure { throw TrustInput.insecureRefusal }
        if (issuer == nil) == (tokenURL == nil) {
            throw ValidationError("give exactly one of --issuer and --token-url")
        }
        if introspect && issuer == nil {
            throw ValidationError("--introspect needs --issuer: the introspection endpoint is discovered")
        }
        if clientCredentials && username != nil {
            throw ValidationError("--client-credentials and --password exclude each other")
        }
    }

    func run() async throws {
        let endpoint = try RequestPlan.url(issuer ?? tokenURL ?? "")
        guard endpoint.scheme?.lowercased() == "https", let host = endpoint.host else {
            throw CommandFailure.usage("tokens are only asked for over https://, not \(endpoint.absoluteString)")
        }
        let secret = publicClient ? nil : try clientSecret()
        let password = try username.map { _ in try passwordFromPrompt() }
        let transport = CurlTransport(configuration: try transportConfiguration(host: host, port: endpoint.port))
        let outcome: Result<String, any Error>
        do {
            let (token, server) = try await obtain(endpoint, transport: transport, secret: secret, password: password)
            var text = TokenReport(token: token, showsToken: show).text(now: Date())
            if introspect {
                guard let introspection = server.introspectionEndpoint else {
                    throw CommandFailure(ExitStatus.failure, "the server names no introspection endpoint")
                }
                text += try await Introspection.report(
                    token: token.accessToken,
                    endpoint: introspection,
                    client: OAuth2ClientCredentials(clientID: clientID, clientSecret: secret),
                    transport: transport
                )
            }
            outcome = .success(text)
        } catch {
            outcome = .failure(error)
        }
        await transport.shutdown()
        StandardOutput.write(try outcome.get())
    }

    private func obtain(
        _ endpoint: URL,
        transport: CurlTransport,
        secret: String?,
        password: String?
    ) async throws -> (OAuth2Token, AuthorizationServer) {
        let server =
            issuer != nil
            ? try await AuthorizationServer.discover(issuer: endpoint, transport: transport)
            : AuthorizationServer(tokenEndpoint: endpoint)
        let client = OAuth2ClientCredentials(clientID: clientID, clientSecret: secret)
        let scopes = scope.map { Set($0.split(separator: " ").map { Scope(rawValue: String($0)) }) }
        var configuration = ResourceAccess.Configuration(
            resourceBaseURL: server.tokenEndpoint,
            authorizationServer: server,
            transport: transport.configuration,
            userClient: client,
            deviceClient: client,
            userScope: scopes,
            deviceScope: scopes
        )
        configuration.retryPolicy = .never
        let access = try ResourceAccess(configuration: configuration, transport: transport)
        let token: Result<OAuth2Token, any Error>
        do {
            if let username, let password {
                token = .success(try await access.userClient.authenticate(username: username, password: password))
            } else {
                token = .success(try await access.deviceClient.authenticate())
            }
        } catch {
            token = .failure(error)
        }
        await access.shutdown()
        return (try token.get(), server)
    }

    /// A secured transport that trusts the server's host alone: pinned, pinned to `--cacert`,
    /// or through the system's CAs.
    private func transportConfiguration(host: String, port: Int?) throws -> CurlTransport.Configuration {
        let pins = try TrustInput.pins(pins)
        try TrustInput.checkBundle(caBundle)
        let policy: TrustPolicy
        if !pins.isEmpty {
            policy = try TrustPolicy(host: host, pins: pins)
        } else if let caBundle {
            policy = try TrustPolicy(host: host, pinnedCertificateAuthorities: caBundle)
        } else {
            policy = try TrustPolicy.systemRoots(host: host)
        }
        return CurlTransport.Configuration(
            trustedCertificateBundlePath: caBundle,
            security: try SecurityConfiguration.secured(trust: [policy])
        )
    }

    private func clientSecret() throws -> String {
        if let secret = ProcessInfo.processInfo.environment[clientSecretVariable], !secret.isEmpty { return secret }
        guard let secret = Prompt.secret("Client secret for \(clientID): ") else {
            throw CommandFailure.usage("no client secret: set \(clientSecretVariable) or run on a terminal")
        }
        return secret
    }

    private func passwordFromPrompt() throws -> String {
        guard let password = Prompt.secret("Password for \(username ?? ""): ") else {
            throw CommandFailure.usage("--password prompts for the password: run on a terminal")
        }
        return password
    }
}
#endif
