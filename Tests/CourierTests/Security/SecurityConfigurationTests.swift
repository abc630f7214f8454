import Courier
import Foundation
import HTTPTypes
import Testing

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

    @Test(arguments: ["", "sha256//", "sha256//AAAA", "sha1//" + Data(count: 32).base64EncodedString(), "not base64 at all!!"])
    func refusesMalformedPins(_ text: String) {
        #expect(throws: SecurityError.invalidConfiguration) { try SPKIPin(text) }
    }

    @Test(arguments: ["", "*", "*.com", "a.*.example.com", "*example.com", "https://api.example.com", "api.example.com/x", "a..b", "**.example.com"])
    func refusesMalformedHostPatterns(_ pattern: String) {
        #expect(throws: SecurityError.invalidConfiguration) {
            try TrustPolicy(host: pattern, pins: [SecuritySupport.unrelatedPin])
        }
    }

    @Test func normalisesHostPatterns() throws {
        #expect(try TrustPolicy(host: " API.Example.COM. ", pins: [SecuritySupport.unrelatedPin]).host == "api.example.com")
        #expect(try TrustPolicy(host: "[::1]", pins: [SecuritySupport.unrelatedPin]).matches(host: "::1"))
        #expect(try TrustPolicy(host: "127.0.0.1", pins: [SecuritySupport.unrelatedPin]).matches(host: "127.0.0.1"))
    }

    @Test func aTrustedHostIsAlwaysPinned() {
        let error = #expect(throws: SecurityError.invalidConfiguration) {
            try TrustPolicy(host: "api.example.com")
        }
        #expect(error?.host == "api.example.com")
    }

    @Test func refusesEmptyAndAmbiguousTrustSets() throws {
        #expect(throws: SecurityError.invalidConfiguration) { try SecurityConfiguration.secured(trust: []) }
        let one = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin])
        let again = try TrustPolicy(host: "API.example.com", pins: [SecuritySupport.unrelatedPin])
        #expect(throws: SecurityError.invalidConfiguration) { try SecurityConfiguration.secured(trust: [one, again]) }
        let wildcard = try TrustPolicy(host: "*.example.com", pins: [SecuritySupport.unrelatedPin])
        #expect(throws: SecurityError.invalidConfiguration) { try SecurityConfiguration.secured(trust: [wildcard, wildcard]) }
    }

    @Test func readsCertificateFilesWhenTheConfigurationIsMade() throws {
        let missing = "/nonexistent/courier-\(UUID().uuidString).pem"
        #expect(throws: SecurityError.invalidConfiguration) {
            try SecurityConfiguration.secured(trust: [try TrustPolicy(host: "a.example", pinnedCertificateAuthorities: missing)])
        }
        #expect(throws: SecurityError.invalidConfiguration) {
            try SecurityConfiguration.secured(trust: [
                try TrustPolicy(
                    host: "a.example",
                    pins: [SecuritySupport.unrelatedPin],
                    clientCertificate: ClientCertificate(certificateFile: missing, privateKeyFile: missing)
                )
            ])
        }
        #expect(throws: SecurityError.invalidConfiguration) { try SPKIPin(certificateFile: missing) }
        #expect(throws: SecurityError.invalidConfiguration) { try SPKIPin(certificateFile: "/etc/hostname") }
    }

    @Test func comparesAndDescribesConfigurations() throws {
        let policy = try TrustPolicy(host: "api.example.com", pins: [SecuritySupport.unrelatedPin, SecuritySupport.unrelatedPin])
        #expect(policy.pins.count == 1)
        let first = try SecurityConfiguration.secured(trust: [policy])
        let second = try SecurityConfiguration.secured(trust: [policy])
        #expect(first == second)
        #expect(first != (try SecurityConfiguration.secured(trust: [policy], minimumTLSVersion: .v1_3)))
        #expect(first != .unpinned)
        #expect(first.isSecured && !SecurityConfiguration.unpinned.isSecured)
        #expect(first.description == "SecurityConfiguration.secured(api.example.com; TLS ≥ 1.2)")
        #expect(SecurityConfiguration.unpinned.description == "SecurityConfiguration.unpinned")
        #expect(Session.Configuration().security == .unpinned)
    }
}
