public import Courier
import Foundation
public import Logging

/// The load a fleet member puts on the servers, over any ``SharedTokenStore``: a store-specific
/// executable builds its store and calls ``run(_:store:)``.
public enum FleetLoad: Sendable {
    /// Runs ``FleetOptions/callers`` concurrent callers that send requests through one
    /// ``ResourceAccess`` on `store` — each at most ``FleetOptions/requestsPerCaller``
    /// requests, for at most ``FleetOptions/duration`` — and sums up what happened.
    ///
    /// - Parameters:
    ///   - options: The servers, the level and the load.
    ///   - store: The token store the fleet shares.
    /// - Returns: The summary.
    /// - Throws: When the access cannot be configured (bad pins, URLs).
    public static func run(_ options: FleetOptions, store: any SharedTokenStore) async throws -> FleetSummary {
        let events = FleetEventCounter(member: options.member)
        let access = try ResourceAccess(
            configuration: try configuration(options, store: store, logger: events.logger())
        )
        let started = ContinuousClock.now
        let deadline = started + options.duration
        let tally = await withTaskGroup(of: Tally.self) { group in
            for _ in 0..<options.callers {
                group.addTask {
                    var tally = Tally()
                    // Callers start spread over one pause, and each pause varies by ±20 %,
                    // so they do not march in step.
                    try? await Task.sleep(for: options.pause * Double.random(in: 0...1))
                    while tally.requests < options.requestsPerCaller, ContinuousClock.now < deadline {
                        tally.requests += 1
                        do {
                            let response = try await send(options, access: access)
                            if (200..<300).contains(response.statusCode) {
                                tally.successes += 1
                            } else {
                                tally.failures["status-\(response.statusCode)", default: 0] += 1
                            }
                        } catch let error as CourierError {
                            tally.failures["\(error.kind)", default: 0] += 1
                        } catch {
                            tally.failures["other", default: 0] += 1
                        }
                        try? await Task.sleep(for: options.pause * Double.random(in: 0.8...1.2))
                    }
                    return tally
                }
            }
            return await group.reduce(into: Tally()) { $0.add($1) }
        }
        let elapsed = ContinuousClock.now - started
        await access.shutdown()
        let counts = events.snapshot
        return FleetSummary(
            member: options.member,
            pid: ProcessInfo.processInfo.processIdentifier,
            level: options.level.rawValue,
            requests: tally.requests,
            successes: tally.successes,
            failures: tally.failures,
            renewals: counts["renewed", default: 0],
            adopted: counts["adopted", default: 0],
            leases: counts["lease", default: 0],
            conflicts: counts["conflict", default: 0],
            degraded: counts["degraded", default: 0],
            warnings: counts["warnings", default: 0],
            seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
        )
    }

    /// The access configuration of a member: the servers over pinned TLS, the shared store,
    /// the leeway and lease duration of the options.
    public static func configuration(
        _ options: FleetOptions,
        store: any SharedTokenStore,
        logger: Logger?
    ) throws -> ResourceAccess.Configuration {
        let hosts = Set([options.oauth.host, options.gateway.host].compactMap { $0 })
        let pins = try options.pins.map { try SPKIPin($0) }
        let identity = options.clientCertificate.map {
            ClientCertificate(certificateFile: $0.certificate, privateKeyFile: $0.key)
        }
        let security = try SecurityConfiguration.secured(
            trust: try hosts.sorted().map {
                try TrustPolicy(
                    host: $0,
                    pins: pins,
                    pinnedCertificateAuthorities: options.caBundle,
                    clientCertificate: identity
                )
            }
        )
        var server = AuthorizationServer(baseURL: options.oauth)
        server.issuesCertificateBoundTokens = identity != nil
        var configuration = ResourceAccess.Configuration(
            resourceBaseURL: options.gateway,
            authorizationServer: server,
            transport: .init(proxy: .none, security: security),
            userClient: OAuth2ClientCredentials(
                clientID: options.userClientID,
                clientSecret: options.userClientSecret
            ),
            deviceClient: OAuth2ClientCredentials(
                clientID: options.deviceClientID,
                clientSecret: options.deviceClientSecret
            ),
            tokenStore: store
        )
        if let path = options.dpopKeyFile {
            let key = try DPoPKey(pemFile: path)
            configuration.userClient.dpopKey = key
            configuration.deviceClient.dpopKey = key
        }
        configuration.renewalLeeway = options.leeway
        configuration.tokenStoreLeaseDuration = options.leaseDuration
        configuration.applicationProduct = "CourierFleetMember/1.0"
        configuration.logger = logger
        return configuration
    }

    private static func send(_ options: FleetOptions, access: ResourceAccess) async throws -> Response {
        switch options.level {
        case .device: try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: options.path))
        case .user: try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: options.path))
        }
    }

    /// One caller's counts.
    private struct Tally: Sendable {
        var requests = 0
        var successes = 0
        var failures: [String: Int] = [:]

        mutating func add(_ other: Tally) {
            requests += other.requests
            successes += other.successes
            failures.merge(other.failures, uniquingKeysWith: +)
        }
    }
}
