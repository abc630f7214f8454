import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// A PKCS#12 client identity for mutual TLS, against the suite's nginx `mtls` block (which
/// trusts the suite's client CA). serve.py exports the suite's client certificate and key as
/// `pki/client.p12` with a test password.
@Suite(.timeLimit(.minutes(2)))
struct SecurityPKCS12Tests {
    @Test func aPKCS12IdentityAuthenticatesTheClient() async throws {
        let env = try await TestServers.shared()
        let pins = [try SecuritySupport.pin(env.rootPin)]
        let identity = try ClientCertificate.pkcs12(path: env.clientPKCS12, password: env.clientPKCS12Password)
        #expect(identity.format == .pkcs12)
        let session = try SecuritySupport.session(
            env,
            .mtls,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: pins, clientCertificate: identity)]
        )
        let marker = SecuritySupport.uniquePath("/bytes/0")
        #expect(try await session.send(HTTPRequest(method: .get, path: marker)).status == .ok)
        await SecuritySupport.close(session)
        try await SecuritySupport.waitForLogEntry(env, .mtls, containing: marker)
        let entry = try #require(try SecuritySupport.logEntries(env, .mtls, containing: marker).first)
        #expect(entry.sslClientVerify == "SUCCESS")
        #expect(entry.sslClientSubject.contains("courier-test-client"))
    }

    @Test func creationChecksTheFileAndThePassword() async throws {
        let env = try await TestServers.shared()
        let wrong = #expect(throws: CourierError(.invalidConfiguration)) {
            try ClientCertificate.pkcs12(path: env.clientPKCS12, password: "not-the-password")
        }
        #expect(wrong?.message.contains("not-the-password") == false)
        #expect(wrong?.message.contains("password") == true)
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ClientCertificate.pkcs12(path: env.clientPKCS12, password: nil)
        }
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ClientCertificate.pkcs12(path: env.workDirectory + "/no-such.p12", password: "x")
        }
        // Not PKCS#12 at all: the PEM certificate.
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ClientCertificate.pkcs12(path: env.clientCertificate, password: env.clientPKCS12Password)
        }
        // Damaged: the real file, cut short.
        let data = try Data(contentsOf: URL(fileURLWithPath: env.clientPKCS12))
        let damaged = FileManager.default.temporaryDirectory.appendingPathComponent("courier-\(UUID()).p12").path
        try data.prefix(data.count / 2).write(to: URL(fileURLWithPath: damaged))
        defer { try? FileManager.default.removeItem(atPath: damaged) }
        #expect(throws: CourierError(.invalidConfiguration)) {
            try ClientCertificate.pkcs12(path: damaged, password: env.clientPKCS12Password)
        }

        let identity = try ClientCertificate.pkcs12(path: env.clientPKCS12, password: env.clientPKCS12Password)
        var dumped = ""
        dump(identity, to: &dumped)
        for text in [identity.description, String(reflecting: identity), dumped] {
            #expect(!text.contains(env.clientPKCS12Password))
        }
    }

    @Test func withoutAnIdentityTheServerRefusesAsBefore() async throws {
        let env = try await TestServers.shared()
        let pins = [try SecuritySupport.pin(env.rootPin)]
        let session = try SecuritySupport.session(env, .mtls, trust: [try TrustPolicy(host: "127.0.0.1", pins: pins)])
        #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .badRequest)
        await SecuritySupport.close(session)
    }
}
