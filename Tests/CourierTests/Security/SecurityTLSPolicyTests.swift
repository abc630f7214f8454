import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// TLS versions, certificate validity, host names and client certificates on secured sessions.
@Suite(.timeLimit(.minutes(2)))
struct SecurityTLSPolicyTests {
    @Test func anUnpinnedTransportCanRequireTLS13Too() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(
            configuration: .init(
                proxy: .none,
                trustedCertificateBundlePath: env.caBundle,
                security: .unpinned(minimumTLSVersion: .v1_3)
            )
        )
        let session = Session(configuration: .init(baseURL: env.url(.tls12)), transport: transport)
        await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
        }
        #expect(transport.security.description == "SecurityConfiguration.unpinned(TLS ≥ 1.3)")
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func refusesATLS12OnlyServerWhenTLS13IsRequired() async throws {
        let env = try await TestServers.shared()
        let trust = [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.rootPin)])]
        let strict = try SecuritySupport.session(env, .tls12, trust: trust, minimumTLSVersion: .v1_3)
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.tlsFailure)) {
            try await strict.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.curlCode == 35)
        try await SecuritySupport.expectNeverReached(env, .tls12, marker: marker)
        await SecuritySupport.close(strict)

        // The default minimum, TLS 1.2, reaches the same server, and TLS 1.2 is what it speaks.
        let standard = try SecuritySupport.session(env, .tls12, trust: trust)
        let okMarker = SecuritySupport.uniquePath("/bytes/0")
        #expect(try await standard.send(HTTPRequest(method: .get, path: okMarker)).status == .ok)
        try await SecuritySupport.waitForLogEntry(env, .tls12, containing: okMarker)
        #expect(try SecuritySupport.logEntries(env, .tls12, containing: okMarker).first?.sslProtocol == "TLSv1.2")
        await SecuritySupport.close(standard)

        // TLS 1.3 is used where the server offers it.
        let modern = try SecuritySupport.session(env, .https, trust: trust, minimumTLSVersion: .v1_3)
        let modernMarker = SecuritySupport.uniquePath("/bytes/0")
        #expect(try await modern.send(HTTPRequest(method: .get, path: modernMarker)).status == .ok)
        try await SecuritySupport.waitForLogEntry(env, .https, containing: modernMarker)
        #expect(try SecuritySupport.logEntries(env, .https, containing: modernMarker).first?.sslProtocol == "TLSv1.3")
        await SecuritySupport.close(modern)
    }

    @Test func refusesAnExpiredCertificateEvenWithAMatchingPin() async throws {
        let env = try await TestServers.shared()
        let session = try SecuritySupport.session(
            env,
            .expired,
            trust: [
                try TrustPolicy(
                    host: "127.0.0.1",
                    pins: [try SecuritySupport.pin(env.spkiPins["expired", default: ""])]
                )
            ]
        )
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.message.contains("expired") == true)
        try await SecuritySupport.expectNeverReached(env, .expired, marker: marker)
        await SecuritySupport.close(session)
    }

    @Test func refusesAWrongHostCertificateEvenWithAMatchingPin() async throws {
        let env = try await TestServers.shared()
        // The intermediate pin matches the wronghost chain: host name verification still fails.
        let session = try SecuritySupport.session(
            env,
            .wrongHost,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.intermediatePin)])]
        )
        let marker = SecuritySupport.uniquePath()
        let error = await #expect(throws: CourierError(.tlsFailure)) {
            try await session.send(HTTPRequest(method: .get, path: marker))
        }
        #expect(error?.message.contains("subject name") == true)
        try await SecuritySupport.expectNeverReached(env, .wrongHost, marker: marker)
        await SecuritySupport.close(session)
    }

    // nginx asks for a client certificate but completes the handshake without one and
    // answers 400; its access log records the verification result.
    @Test func presentsTheClientCertificateOfTheHostsPolicy() async throws {
        let env = try await TestServers.shared()
        let pins = [try SecuritySupport.pin(env.rootPin)]

        let without = try SecuritySupport.session(env, .mtls, trust: [try TrustPolicy(host: "127.0.0.1", pins: pins)])
        let withoutMarker = SecuritySupport.uniquePath("/bytes/0")
        #expect(try await without.send(HTTPRequest(method: .get, path: withoutMarker)).status == .badRequest)
        await SecuritySupport.close(without)

        let identity = ClientCertificate(certificateFile: env.clientCertificate, privateKeyFile: env.clientKey)
        let with = try SecuritySupport.session(
            env,
            .mtls,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: pins, clientCertificate: identity)]
        )
        let withMarker = SecuritySupport.uniquePath("/bytes/0")
        let response = try await with.send(HTTPRequest(method: .get, path: withMarker))
        #expect(response.status == .ok)
        await SecuritySupport.close(with)

        let untrusted = ClientCertificate(
            certificateFile: env.untrustedClientCertificate,
            privateKeyFile: env.untrustedClientKey
        )
        let wrong = try SecuritySupport.session(
            env,
            .mtls,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: pins, clientCertificate: untrusted)]
        )
        let wrongMarker = SecuritySupport.uniquePath("/bytes/0")
        #expect(try await wrong.send(HTTPRequest(method: .get, path: wrongMarker)).status == .badRequest)
        await SecuritySupport.close(wrong)

        try await SecuritySupport.waitForLogEntry(env, .mtls, containing: wrongMarker)
        #expect(try SecuritySupport.logEntries(env, .mtls, containing: withoutMarker).first?.sslClientVerify == "NONE")
        #expect(try SecuritySupport.logEntries(env, .mtls, containing: withMarker).first?.sslClientVerify == "SUCCESS")
        #expect(
            try SecuritySupport.logEntries(env, .mtls, containing: wrongMarker).first?.sslClientVerify.hasPrefix(
                "FAILED"
            )
                == true
        )
    }

    @Test func presentsAClientCertificateOnlyToTheHostsOfItsPolicy() async throws {
        let env = try await TestServers.shared()
        let pins = [try SecuritySupport.pin(env.rootPin)]
        let identity = ClientCertificate(certificateFile: env.clientCertificate, privateKeyFile: env.clientKey)
        // The certificate belongs to `localhost`; the request goes to 127.0.0.1.
        let session = try SecuritySupport.session(
            env,
            .mtls,
            trust: [
                try TrustPolicy(host: "127.0.0.1", pins: pins),
                try TrustPolicy(host: "localhost", pins: pins, clientCertificate: identity),
            ]
        )
        let marker = SecuritySupport.uniquePath("/bytes/0")
        #expect(try await session.send(HTTPRequest(method: .get, path: marker)).status == .badRequest)
        let port = env.nginxMTLS.port!
        let other = try await session.send(
            HTTPRequest(method: .get, scheme: "https", authority: "localhost:\(port)", path: "/bytes/0")
        )
        #expect(other.status == .ok)
        await SecuritySupport.close(session)
        try await SecuritySupport.waitForLogEntry(env, .mtls, containing: marker)
        #expect(try SecuritySupport.logEntries(env, .mtls, containing: marker).first?.sslClientVerify == "NONE")
    }

    @Test func decryptsAnEncryptedClientKeyWithItsPassword() async throws {
        let env = try await TestServers.shared()
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "courier-security-\(UUID().uuidString)"
        )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let encryptedKey = directory.appendingPathComponent("client-key.pem").path
        let password = "correct horse \(UUID().uuidString)"
        try SecuritySupport.run(
            "/usr/bin/openssl",
            [
                "pkey", "-in", env.clientKey, "-aes256", "-passout", "pass:\(password)", "-out", encryptedKey,
            ]
        )
        let pins = [try SecuritySupport.pin(env.rootPin)]

        let wrongPassword = ClientCertificate(
            certificateFile: env.clientCertificate,
            privateKeyFile: encryptedKey,
            password: "wrong"
        )
        let error = #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [
                try TrustPolicy(host: "127.0.0.1", pins: pins, clientCertificate: wrongPassword)
            ])
        }
        #expect(error?.message.contains("wrong") == false)
        #expect(error?.message.contains(password) == false)
        #expect(String(describing: wrongPassword).contains("wrong") == false)
        #expect(String(reflecting: wrongPassword).contains("wrong") == false)
        var dumped = ""
        dump(wrongPassword, to: &dumped)
        #expect(dumped.contains("wrong") == false)

        #expect(throws: CourierError(.invalidConfiguration)) {
            try SecurityConfiguration.secured(trust: [
                try TrustPolicy(
                    host: "127.0.0.1",
                    pins: pins,
                    clientCertificate: ClientCertificate(
                        certificateFile: env.clientCertificate,
                        privateKeyFile: encryptedKey
                    )
                )
            ])
        }

        let identity = ClientCertificate(
            certificateFile: env.clientCertificate,
            privateKeyFile: encryptedKey,
            password: password
        )
        let session = try SecuritySupport.session(
            env,
            .mtls,
            trust: [try TrustPolicy(host: "127.0.0.1", pins: pins, clientCertificate: identity)]
        )
        #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .ok)
        await SecuritySupport.close(session)
    }
}
