import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Building secured configurations: pins, host patterns, policies, files.
@Suite(.timeLimit(.minutes(1)))
struct SecurityConfigurationTests {
    @Test func parsesPinsInCurlsFormAndBare() throws {
        let digest = [UInt8](0..<32)
        let base64 = Data(digest).base64EncodedString()
        #expect(try SPKIPin("sha256//" + base64).sha256 == digest)
        #expect(try SPKIPin(base64).sha256 == digest)
        #expect(try SPKIPin(base64).description == "sha256//" + base64)
        #expect(try SPKIPin(sha256: digest).base64 == base64)
    }

    @Test(arguments: [
        "", "sha256//", "sha256//AAAA", "sha1//" + Data(count: 32).base64EncodedString(), "not base64 at all!!",
    ])
    func refusesMalformedPins(_ text: String) {
        #expect(throws: CourierError(.invalidConfiguration)) { try SPKIPin(text) }
    }

    @Test(arguments: [
        "", "*", "*.com", "a.*.example.com", "*example.com", "https://api.example.com", "api.example.com/x", "a..b",
        "**.example.com",
    ])
    func refusesMalformedHostPatterns(_ pattern: String) {
        #expect(throws: CourierError(.invalidConfiguration)) {
            try TrustPolicy(host: pattern, pins: [SecuritySupport.unrelatedPin])
        }
    }

    @Test func normalisesHostPatterns() throws {
        #expect(
            try TrustPolicy(host: " API.Example.COM. ", pins: [SecuritySupport.unrelatedPin]).host == "api.example.com"
        )
        #expect(try TrustPolicy(host: "[::1]", pins: [SecuritySupport.unrelatedPin]).matches(host: "::1", port: 443))
        #expect(
            try TrustPolicy(host: "127.0.0.1", pins: [SecuritySupport.unrelatedPin]).matches(
                host: "127.0.0.1",
                port: 8443
            )
        )
    }

    @Test func aTrustedHostIsAlwaysPinned() {
        let error = #expect(throws: CourierError(.invalidConfiguration)) {
            try TrustPolicy(host: "api.example.com")
        }
        #expect(error?.host == "api.example.com")
    }

    @Test func refusesEmptyAndAmbiguousTrustSets() throws {
        #expect(throws: CourierError(.invalidConfiguration)) { try SecurityConfiguration.secured(trust: []) }
        let one = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        let again = try TrustPolicy(host: "API.example.com", pins: [SecuritySupport.unrelatedPin])
        #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [one, again])
        }
        let wildcard = try TrustPolicy(host: "*.example.com", pins: [SecuritySupport.unrelatedPin])
        #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [wildcard, wildcard])
        }
    }

    // MARK: Port-aware policies

    @Test func aPolicyNamingAPortAppliesToThatPortOnly() throws {
        let policy = try TrustPolicy(host: "LocalHost.", port: 8443, pins: [SecuritySupport.unrelatedPin])
        #expect(policy.host == "localhost")
        #expect(policy.port == 8443)
        #expect(policy.matches(host: "localhost", port: 8443))
        #expect(!policy.matches(host: "localhost", port: 9443))
        #expect(!policy.matches(host: "localhost", port: 443))
        #expect(!policy.matches(host: "127.0.0.1", port: 8443))
        #expect(try TrustPolicy(host: "localhost", pins: [SecuritySupport.unrelatedPin]).port == nil)

        let security = try SecurityConfiguration.secured(trust: [policy])
        #expect(security.trustPolicy(forHost: "localhost", port: 8443) == policy)
        #expect(security.trustPolicy(forHost: "LOCALHOST.", port: 8443) == policy)
        #expect(security.trustPolicy(forHost: "localhost", port: 9443) == nil)
        #expect(security.trustPolicy(forHost: "localhost") == nil, "the default port is 443")

        func request(_ authority: String) -> HTTPRequest {
            HTTPRequest(method: .get, scheme: "https", authority: authority, path: "/")
        }
        #expect((try? security.checkCredentialTarget(request("localhost:8443"))) != nil)
        #expect((try? security.checkCredentialTarget(request("LocalHost.:8443"))) != nil)
        let otherPort = #expect(throws: CourierError(.untrustedHost)) {
            try security.checkCredentialTarget(request("localhost:9443"))
        }
        #expect(otherPort?.host == "localhost:9443")
        #expect(otherPort?.message.contains("localhost:9443") == true)
        let defaultPort = #expect(throws: CourierError(.untrustedHost)) {
            try security.checkCredentialTarget(request("localhost"))
        }
        #expect(defaultPort?.host == "localhost")
        // An explicit :443 is the default port, still not 8443.
        #expect(throws: CourierError(.untrustedHost)) {
            try security.checkCredentialTarget(request("localhost:443"))
        }
    }

    @Test func anUntrustedIPv6HostAndPortIsReportedInBrackets() throws {
        let security = try SecurityConfiguration.secured(trust: [
            try TrustPolicy(host: "[::1]", port: 8443, pins: [SecuritySupport.unrelatedPin])
        ])
        #expect(security.trustPolicy(forHost: "::1", port: 8443) != nil)
        #expect(security.trustPolicy(forHost: "[0:0::1]", port: 8443) != nil)
        #expect(security.trustPolicy(forHost: "::1", port: 9443) == nil)
        func request(_ authority: String) -> HTTPRequest {
            HTTPRequest(method: .get, scheme: "https", authority: authority, path: "/")
        }
        #expect((try? security.checkCredentialTarget(request("[::1]:8443"))) != nil)
        let error = #expect(throws: CourierError(.untrustedHost)) {
            try security.checkCredentialTarget(request("[::1]:9443"))
        }
        // An IPv6 host with a port must keep its brackets, as the TLS path writes it
        // (Authority.description); "::1:9443" would read as another address.
        #expect(error?.host == "[::1]:9443")
    }

    @Test func aPolicyNamingThePortWinsOverAPortlessOneForTheSameHost() throws {
        let anyPort = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        let adminPin = try SPKIPin(sha256: [UInt8](repeating: 9, count: 32))
        let admin = try TrustPolicy(host: "api.example.com", port: 8443, pins: [adminPin])
        // The order of the policies does not matter.
        for trust in [[anyPort, admin], [admin, anyPort]] {
            let security = try SecurityConfiguration.secured(trust: trust)
            #expect(security.trustPolicy(forHost: "api.example.com", port: 8443) == admin)
            #expect(security.trustPolicy(forHost: "api.example.com", port: 8443)?.pins == [adminPin])
            #expect(security.trustPolicy(forHost: "api.example.com", port: 9443) == anyPort)
            #expect(security.trustPolicy(forHost: "api.example.com") == anyPort)
        }
        // An exact host with another port does not apply; a wildcard for every port then does.
        let wildcard = try TrustPolicy(host: "*.example.com", pins: [SecuritySupport.unrelatedPin])
        let security = try SecurityConfiguration.secured(trust: [wildcard, admin])
        #expect(security.trustPolicy(forHost: "api.example.com", port: 8443) == admin)
        #expect(security.trustPolicy(forHost: "api.example.com", port: 443) == wildcard)
        // A wildcard that names a port wins over a portless wildcard.
        let wildcardAdmin = try TrustPolicy(host: "*.example.com", port: 8443, pins: [adminPin])
        let wildcards = try SecurityConfiguration.secured(trust: [wildcard, wildcardAdmin])
        #expect(wildcards.trustPolicy(forHost: "cdn.example.com", port: 8443) == wildcardAdmin)
        #expect(wildcards.trustPolicy(forHost: "cdn.example.com", port: 443) == wildcard)
    }

    @Test func refusesTwoPoliciesForTheSameHostAndPort() throws {
        let pins = [SecuritySupport.unrelatedPin]
        let one = try TrustPolicy(host: "localhost", port: 8443, pins: pins)
        let again = try TrustPolicy(host: "LOCALHOST.", port: 8443, pins: pins)
        let error = #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [one, again])
        }
        #expect(error?.host == "localhost")
        #expect(error?.message.contains("localhost:8443") == true)
        let wildcard = try TrustPolicy(host: "*.example.com", port: 8443, pins: pins)
        #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [wildcard, wildcard])
        }
        // Another port of the same host, or the same host for every port, is a different policy.
        let other = try TrustPolicy(host: "localhost", port: 9443, pins: pins)
        let anyPort = try TrustPolicy(host: "localhost", pins: pins)
        let security = try SecurityConfiguration.secured(trust: [one, other, anyPort])
        #expect(security.trustPolicies == [one, other, anyPort])
    }

    @Test(arguments: [0, -1, 65536, 70000, Int.max])
    func refusesAPortOutsideTheValidRange(_ port: Int) {
        let error = #expect(throws: CourierError(.invalidConfiguration)) {
            try TrustPolicy(host: "localhost", port: port, pins: [SecuritySupport.unrelatedPin])
        }
        #expect(error?.host == "localhost")
        #expect(error?.message.contains("\(port)") == true)
    }

    @Test(arguments: [1, 443, 65535])
    func acceptsAPortInTheValidRange(_ port: Int) throws {
        #expect(try TrustPolicy(host: "localhost", port: port, pins: [SecuritySupport.unrelatedPin]).port == port)
    }

    @Test func readsCertificateFilesWhenTheConfigurationIsMade() throws {
        let missing = "/nonexistent/courier-\(UUID().uuidString).pem"
        #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [
                try TrustPolicy(host: "a.example", pinnedCertificateAuthorities: missing)
            ])
        }
        #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [
                try TrustPolicy(
                    host: "a.example",
                    pins: [SecuritySupport.unrelatedPin],
                    clientCertificate: ClientCertificate(certificateFile: missing, privateKeyFile: missing)
                )
            ])
        }
        #expect(throws: CourierError(.invalidConfiguration)) { try SPKIPin(certificateFile: missing) }
        #expect(throws: CourierError(.invalidConfiguration)) { try SPKIPin(certificateFile: "/etc/hostname") }
    }

    @Test func comparesAndDescribesConfigurations() throws {
        let policy = try TrustPolicy(
            host: "api.example.com",
            pins: [SecuritySupport.unrelatedPin, SecuritySupport.unrelatedPin]
        )
        #expect(policy.pins.count == 1)
        let first = try SecurityConfiguration.secured(trust: [policy])
        let second = try SecurityConfiguration.secured(trust: [policy])
        #expect(first == second)
        #expect(first != (try SecurityConfiguration.secured(trust: [policy], minimumTLSVersion: .v1_3)))
        #expect(first != .unpinned)
        #expect(first.isSecured && !SecurityConfiguration.unpinned.isSecured)
        #expect(first.description == "SecurityConfiguration.secured(api.example.com; TLS ≥ 1.2)")
        #expect(SecurityConfiguration.unpinned.description == "SecurityConfiguration.unpinned")
        #expect(CurlTransport.Configuration().security == .unpinned)
    }

    // MARK: Policies that trust the system's roots

    @Test func aSystemRootsPolicyPinsNothingAndSaysSo() throws {
        let policy = try TrustPolicy.systemRoots(host: " API.Weather.Example. ")
        #expect(policy.host == "api.weather.example")
        #expect(policy.port == nil)
        #expect(policy.pins.isEmpty)
        #expect(policy.pinnedCertificateAuthorities == nil)
        #expect(policy.clientCertificate == nil)
        #expect(!policy.isPinned)
        #expect(policy.matches(host: "api.weather.example", port: 443))
        #expect(policy.matches(host: "API.WEATHER.EXAMPLE.", port: 8443))
        #expect(policy == (try TrustPolicy.systemRoots(host: "api.weather.example")))
        #expect(policy != (try TrustPolicy(host: "api.weather.example", pins: [SecuritySupport.unrelatedPin])))
        #expect(try TrustPolicy(host: "a.example", pins: [SecuritySupport.unrelatedPin]).isPinned)
        #expect(try TrustPolicy(host: "a.example", pinnedCertificateAuthorities: "/etc/roots.pem").isPinned)

        let identity = ClientCertificate(certificateFile: "/etc/client.pem", privateKeyFile: "/etc/client-key.pem")
        let mutual = try TrustPolicy.systemRoots(host: "partner.example", port: 8443, clientCertificate: identity)
        #expect(mutual.port == 8443)
        #expect(mutual.clientCertificate == identity)
        #expect(!mutual.isPinned)
    }

    @Test func theInitializerStillRefusesAPolicyWithoutPinsOrCABundle() {
        for make in [
            { try TrustPolicy(host: "api.weather.example") },
            { try TrustPolicy(host: "api.weather.example", port: 443, pins: []) },
            { try TrustPolicy(host: "*.weather.example", pins: [], pinnedCertificateAuthorities: nil) },
        ] {
            let error = #expect(throws: CourierError(.invalidConfiguration)) { try make() }
            // It names the explicit way to trust the system's roots.
            #expect(error?.message.contains("TrustPolicy.systemRoots(host:)") == true)
        }
    }

    @Test(arguments: ["", "*", "*.com", "a.*.example.com", "https://api.example.com", "api.example.com/x"])
    func aSystemRootsPolicyRefusesMalformedHostPatterns(_ pattern: String) {
        #expect(throws: CourierError(.invalidConfiguration)) { try TrustPolicy.systemRoots(host: pattern) }
    }

    @Test(arguments: [0, -1, 65536, Int.max])
    func aSystemRootsPolicyRefusesAPortOutsideTheValidRange(_ port: Int) {
        let error = #expect(throws: CourierError(.invalidConfiguration)) {
            try TrustPolicy.systemRoots(host: "localhost", port: port)
        }
        #expect(error?.host == "localhost")
    }

    @Test func aSystemRootsWildcardCoversOneLabel() throws {
        let policy = try TrustPolicy.systemRoots(host: "*.Weather.Example")
        #expect(policy.host == "*.weather.example")
        #expect(policy.matches(host: "eu.weather.example", port: 443))
        #expect(!policy.matches(host: "weather.example", port: 443))
        #expect(!policy.matches(host: "a.eu.weather.example", port: 443))
    }

    @Test func compiledTrustLooksUpSystemRootsPoliciesLikePinnedOnes() throws {
        let pins = [SecuritySupport.unrelatedPin]
        let anyPort = try TrustPolicy.systemRoots(host: "api.example.com")
        let adminPinned = try TrustPolicy(host: "api.example.com", port: 8443, pins: pins)
        let wildcard = try TrustPolicy.systemRoots(host: "*.example.com")
        let cdnPinned = try TrustPolicy(host: "cdn.example.com", pins: pins)
        let payOnePort = try TrustPolicy.systemRoots(host: "pay.example.com", port: 9443)
        let wildcardAdmin = try TrustPolicy(host: "*.example.com", port: 8443, pins: pins)
        let policies = [anyPort, adminPinned, wildcard, cdnPinned, payOnePort, wildcardAdmin]
        for order in [policies, policies.reversed()] {
            let compiled = try CompiledTrust(policies: order)
            // A pinned policy naming the port wins over the portless system-roots one.
            #expect(compiled.policy(forHost: "api.example.com", port: 8443) == adminPinned)
            #expect(compiled.policy(forHost: "api.example.com", port: 443) == anyPort)
            // An exact host wins over a wildcard, pinned or not.
            #expect(compiled.policy(forHost: "cdn.example.com", port: 443) == cdnPinned)
            #expect(compiled.policy(forHost: "eu.example.com", port: 443) == wildcard)
            #expect(compiled.policy(forHost: "eu.example.com", port: 8443) == wildcardAdmin)
            // An exact host for another port does not apply; the wildcard does.
            #expect(compiled.policy(forHost: "pay.example.com", port: 9443) == payOnePort)
            #expect(compiled.policy(forHost: "pay.example.com", port: 443) == wildcard)
            #expect(compiled.policy(forHost: "a.b.example.com", port: 443) == nil)
            #expect(compiled.policy(forHost: "example.org", port: 443) == nil)
            // Every policy has a compiled handle for the verify hook; an untrusted host has none.
            #expect(compiled.handle(forHost: "api.example.com", port: 443) != nil)
            #expect(compiled.handle(forHost: "eu.example.com", port: 443) != nil)
            #expect(compiled.handle(forHost: "example.org", port: 443) == nil)
        }

        // The other way round: a system-roots policy naming the port wins over a pinned portless one.
        let pinnedAnyPort = try TrustPolicy(host: "api.example.com", pins: pins)
        let systemAdmin = try TrustPolicy.systemRoots(host: "api.example.com", port: 8443)
        let swapped = try SecurityConfiguration.secured(trust: [pinnedAnyPort, systemAdmin])
        #expect(swapped.trustPolicy(forHost: "API.example.com.", port: 8443) == systemAdmin)
        #expect(swapped.trustPolicy(forHost: "api.example.com") == pinnedAnyPort)
    }

    @Test func aHostAndPortTakeOnePolicyPinnedOrNot() throws {
        let pinned = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        let system = try TrustPolicy.systemRoots(host: "API.example.com")
        for trust in [[pinned, system], [system, pinned], [system, system]] {
            let error = #expect(throws: CourierError(.invalidConfiguration)) {
                try SecurityConfiguration.secured(trust: trust)
            }
            #expect(error?.host == "api.example.com")
        }
        let wildcard = try TrustPolicy.systemRoots(host: "*.example.com", port: 8443)
        #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [
                wildcard, try TrustPolicy(host: "*.example.com", port: 8443, pins: [SecuritySupport.unrelatedPin]),
            ])
        }
    }

    @Test func credentialsMayGoToASystemRootsHostOverHTTPSOnly() throws {
        let security = try SecurityConfiguration.secured(trust: [
            try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin]),
            try TrustPolicy.systemRoots(host: "api.weather.example"),
        ])
        #expect(
            security.description
                == "SecurityConfiguration.secured(api.example.com, api.weather.example (system roots); TLS ≥ 1.2)"
        )
        func request(_ scheme: String, _ authority: String) -> HTTPRequest {
            HTTPRequest(method: .get, scheme: scheme, authority: authority, path: "/")
        }
        #expect((try? security.checkCredentialTarget(request("https", "api.weather.example"))) != nil)
        #expect((try? security.checkCredentialTarget(request("https", "API.Weather.Example.:8443"))) != nil)
        #expect(throws: CourierError(.insecureScheme)) {
            try security.checkCredentialTarget(request("http", "api.weather.example"))
        }
        let other = #expect(throws: CourierError(.untrustedHost)) {
            try security.checkCredentialTarget(request("https", "evil.weather.example"))
        }
        #expect(other?.host == "evil.weather.example")
        #expect(throws: CourierError(.invalidURL)) {
            try security.checkCredentialTarget(request("https", "user:pw@api.weather.example"))
        }
        // The plain configuration still lets nothing through.
        #expect(throws: CourierError(.untrustedHost)) {
            try SecurityConfiguration.unpinned.checkCredentialTarget(request("https", "api.weather.example"))
        }
    }
}
