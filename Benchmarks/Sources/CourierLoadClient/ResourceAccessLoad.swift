import Courier
import Foundation
import LoadClientSupport
import Synchronization

/// The authenticated modes: `ResourceAccess.deviceClient.sendAnonymousRequest` on a secured
/// transport, the token already in the store, so that what a request costs beyond
/// `Session.send` is the resource path itself — the security screen, the auth middleware and the
/// broker's token lookup — and, in mode `dpop`, one DPoP proof.
///
/// - `access`: a bearer token.
/// - `dpop`: the device client has a DPoP key and the stored token is bound to it, so every
///   request also carries a fresh proof (ES256 over the random `jti`, the token's `ath`, the
///   method and the URI).
///
/// The trust set pins the harness's CA for 127.0.0.1 (its key as the SPKI pin, its file as the
/// only root), so each TLS connection is checked as a secured application's would be. The token
/// is valid for a day and the device grant throws, so no token request is ever made: a run that
/// needed one would count errors, and the process exits with status 1 when the grant was asked.
enum ResourceAccessLoad {
    /// The device client's id, the key of the seeded token in the store.
    static let clientID = "load-device"
    /// How often the device grant was asked for a token: 0 in a valid run.
    static let grantsAsked = Atomic<Int>(0)

    /// What the device grant throws: the run must never need a token.
    struct UnexpectedGrant: Error, CustomStringConvertible {
        var description: String { "the load run asked for a device token" }
    }

    /// Runs the request loop of `options` and reports it as `courier-access` or `courier-dpop`.
    ///
    /// - Parameter options: The harness's options; `url` must be HTTPS and `caFile` set.
    static func run(options: LoadOptions) async {
        let access: ResourceAccess
        do {
            access = try await makeAccess(options: options)
        } catch {
            fail("could not set up resource access: \(error)")
        }
        let request = ResourceRequest(path: options.originAndPath.path)
        await LoadRunner.run(client: options.mode == "dpop" ? "courier-dpop" : "courier-access", options: options) {
            do {
                let response = try await access.deviceClient.sendAnonymousRequest(request)
                return outcome(of: response, bytes: response.data.count)
            } catch {
                return RequestOutcome(bytes: 0, status: 0, error: "\(error)")
            }
        }
        await access.shutdown()
        let asked = grantsAsked.load(ordering: .relaxed)
        if asked > 0 { fail("the device grant was asked \(asked) time(s): the seeded token was not used") }
    }

    /// Resource access to the harness's TLS origin with the device token seeded in its store.
    private static func makeAccess(options: LoadOptions) async throws -> ResourceAccess {
        guard let caFile = options.caFile else { fail("mode \(options.mode) needs --ca (an HTTPS origin)") }
        let origin = URL(string: options.originAndPath.origin)!
        guard origin.scheme == "https", let host = origin.host else { fail("mode \(options.mode) needs an https URL") }
        let security = try SecurityConfiguration.secured(trust: [
            try TrustPolicy(
                host: host,
                pins: try SPKIPin.pins(fromCertificateFile: caFile),
                pinnedCertificateAuthorities: caFile
            )
        ])
        let key: DPoPKey? = options.mode == "dpop" ? DPoPKey.generate() : nil
        let store = InMemoryTokenStore()
        var token = OAuth2Token(
            accessToken: "load-token-\(UInt64.random(in: 0...UInt64.max))",
            expiresAt: Date().addingTimeInterval(86_400)
        )
        if let key {
            token.tokenType = .dpop
            token.keyThumbprint = key.thumbprint
        }
        try await store.setToken(token, for: TokenStoreKey(clientID: clientID, level: .device))

        var configuration = ResourceAccess.Configuration(
            resourceBaseURL: origin,
            authorizationServer: AuthorizationServer(tokenEndpoint: origin.appendingPathComponent("token")),
            transport: .init(
                maximumConnectionsPerHost: options.connections,
                trustedCertificateBundlePath: caFile,
                allowsHTTP2: !options.http1Only,
                security: security
            ),
            userClient: OAuth2ClientCredentials(clientID: "load-user"),
            deviceClient: OAuth2ClientCredentials(clientID: clientID),
            tokenStore: store
        )
        configuration.deviceClient.dpopKey = key
        configuration.strategies.device = OAuth2Grant { _ in
            grantsAsked.add(1, ordering: .relaxed)
            throw UnexpectedGrant()
        }
        return try ResourceAccess(configuration: configuration)
    }

    /// Writes `message` to stderr and exits with status 1.
    private static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("courier-access: \(message)\n".utf8))
        exit(1)
    }
}
