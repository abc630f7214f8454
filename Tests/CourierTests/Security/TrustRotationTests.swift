import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Replacing the trust of a running transport: pins and client certificates change for new
/// requests, requests in flight finish under the old trust, and no connection made under
/// the old trust serves a request under the new one.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct TrustRotationTests {
    @Test(
        "pins replaced under load: no failure, and no new request goes over an old connection",
        arguments: [false, true]
    )
    func replacesPinsUnderLoad(allowsHTTP2: Bool) async throws {
        let env = try await TestServers.shared()
        let leaf = try SecuritySupport.pin(env.leafPin)
        let backup = try SecuritySupport.pin(env.intermediatePin)
        let transport = TrustRotationSupport.transport(
            env,
            try .secured(trust: [try TrustPolicy(host: "127.0.0.1", pins: [leaf, backup])]),
            allowsHTTP2: allowsHTTP2
        )
        let session = Session(configuration: .init(baseURL: env.url(.https)), transport: transport)
        let run = "rotation-\(UUID().uuidString.prefix(8))"
        let finished = Locked(0)
        let perPhase = 500
        let failures = Locked<[String]>([])

        try await withThrowingTaskGroup(of: Void.self) { group in
            func send(_ phase: String, _ index: Int) {
                group.addTask {
                    do {
                        let response = try await session.send(
                            HTTPRequest(method: .get, path: "/bytes/1k?\(run)=\(phase)&i=\(index)")
                        )
                        if response.status != .ok || response.data.count != 1024 {
                            failures.withLock { $0.append("\(phase) \(index): \(response.status)") }
                        }
                    } catch {
                        failures.withLock { $0.append("\(phase) \(index): \(error)") }
                    }
                    if phase == "before" { finished.withLock { $0 += 1 } }
                }
            }
            for index in 0..<perPhase { send("before", index) }
            try await TrustRotationSupport.waitUntilTakenIn(transport, count: perPhase, finished: finished)
            // The backup pin is promoted; the old leaf key is no longer trusted.
            try transport.replaceTrust(
                with: .secured(trust: [
                    try TrustPolicy(host: "127.0.0.1", pins: [backup, SecuritySupport.unrelatedPin])
                ])
            )
            for index in 0..<perPhase { send("after", index) }
            try await group.waitForAll()
        }

        #expect(failures.value.isEmpty, "\(failures.value.prefix(5))")
        let entries = try await TrustRotationSupport.logEntries(env, .https, containing: run, count: 2 * perPhase)
        #expect(entries.count == 2 * perPhase)
        let before = Set(entries.filter { $0.uri.contains("\(run)=before") }.map(\.connection))
        let after = Set(entries.filter { $0.uri.contains("\(run)=after") }.map(\.connection))
        #expect(!before.isEmpty && !after.isEmpty)
        #expect(before.isDisjoint(with: after), "connections made before the switch served requests after it")
        if allowsHTTP2 {
            #expect(entries.allSatisfy { $0.httpProtocol == "HTTP/2.0" })
        } else {
            #expect(entries.allSatisfy { $0.httpProtocol == "HTTP/1.1" })
        }
        await session.shutdown()
        await transport.shutdown()
    }

    @Test("many rotations while requests run: every request succeeds, and the transport shuts down cleanly")
    func manyRotationsWhileRequestsRun() async throws {
        let env = try await TestServers.shared()
        let leaf = try SecuritySupport.pin(env.leafPin)
        let backup = try SecuritySupport.pin(env.intermediatePin)
        let pinSets = [[leaf, backup], [backup], [leaf], [backup, SecuritySupport.unrelatedPin]]
        let transport = TrustRotationSupport.transport(
            env,
            try .secured(trust: [try TrustPolicy(host: "127.0.0.1", pins: pinSets[0])])
        )
        let session = Session(configuration: .init(baseURL: env.url(.https)), transport: transport)
        let rounds = 20
        let failures = try await withThrowingTaskGroup(of: String?.self) { group in
            for round in 0..<rounds {
                for index in 0..<20 {
                    group.addTask {
                        do {
                            let path = "/bytes/1k?churn=\(round)-\(index)"
                            let response = try await session.send(HTTPRequest(method: .get, path: path))
                            return response.status == .ok && response.data.count == 1024 ? nil : "\(response.status)"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                let pins = pinSets[(round + 1) % pinSets.count]
                try transport.replaceTrust(with: .secured(trust: [try TrustPolicy(host: "127.0.0.1", pins: pins)]))
            }
            return try await group.reduce(into: [String]()) { if let failure = $1 { $0.append(failure) } }
        }
        #expect(failures.isEmpty, "\(failures.prefix(3))")
        #expect(transport.loop.trust?.generationCount == rounds + 1)
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func anEarlierTrustSetIsFreedOnceNoRequestOrConnectionUsesIt() async throws {
        let env = try await TestServers.shared()
        let policy = { try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.leafPin)]) }
        let transport = TrustRotationSupport.transport(env, try .secured(trust: [try policy()]))
        let session = Session(configuration: .init(baseURL: env.url(.https)), transport: transport)
        let trust = try #require(transport.loop.trust)
        struct Weak { weak var generation: TrustGeneration? }
        let first = Weak(generation: trust.current)
        // A connection made under the first set stays in the pool, and holds it.
        #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .ok)
        var unused: [Weak] = []
        for _ in 0..<20 {
            try transport.replaceTrust(with: .secured(trust: [try policy()]))
            unused.append(Weak(generation: trust.current))
        }
        unused.removeLast()  // the current one
        #expect(trust.current.cipherList?.hasSuffix(":!COURIER-TRUST-20") == true)
        #expect(unused.allSatisfy { $0.generation == nil }, "a set no request or connection used was kept")
        #expect(first.generation != nil, "the pooled connection's set was freed under it")
        #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .ok)
        await session.shutdown()
        await transport.shutdown()
        #expect(first.generation == nil, "the set outlived its connections")
    }

    @Test func pinsThatDoNotMatchRefuseNewRequestsWhileThoseInFlightFinish() async throws {
        let env = try await TestServers.shared()
        let transport = TrustRotationSupport.transport(
            env,
            try .secured(trust: [try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.leafPin)])])
        )
        let session = Session(configuration: .init(baseURL: env.url(.https)), transport: transport)
        let finished = Locked(0)
        let inFlight = 200
        let results = try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<inFlight {
                group.addTask {
                    defer { finished.withLock { $0 += 1 } }
                    let response = try? await session.send(
                        HTTPRequest(method: .get, path: "/bytes/1k?inflight=\(index)")
                    )
                    return response?.status == .ok && response?.data.count == 1024
                }
            }
            try await TrustRotationSupport.waitUntilTakenIn(transport, count: inFlight, finished: finished)
            try transport.replaceTrust(
                with: .secured(trust: [try TrustPolicy(host: "127.0.0.1", pins: [SecuritySupport.unrelatedPin])])
            )
            let marker = SecuritySupport.uniquePath("/bytes/0")
            await #expect(throws: CourierError.self) {
                do {
                    _ = try await session.send(HTTPRequest(method: .get, path: marker))
                } catch let error as CourierError {
                    #expect(error.kind == .pinMismatch)
                    #expect(error.expectedPins == [SecuritySupport.unrelatedPin])
                    throw error
                }
            }
            try await SecuritySupport.expectNeverReached(env, .https, marker: marker)
            return try await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results.count == inFlight)
        #expect(results.allSatisfy { $0 }, "requests in flight at the switch failed")
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func aReplacedClientCertificateIsPresentedByRequestsAfterTheSwitch() async throws {
        let env = try await TestServers.shared()
        let pins = [try SecuritySupport.pin(env.leafPin)]
        let first = ClientCertificate(certificateFile: env.clientCertificate, privateKeyFile: env.clientKey)
        let second = try TrustRotationSupport.clientCertificate(env, name: "courier-rotated-client", days: 30)
        let transport = TrustRotationSupport.transport(
            env,
            try .secured(trust: [try TrustPolicy(host: "127.0.0.1", pins: pins, clientCertificate: first)])
        )
        let session = Session(configuration: .init(baseURL: env.url(.mtls)), transport: transport)
        let run = "client-rotation-\(UUID().uuidString.prefix(8))"
        for index in 0..<5 {
            let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/0?\(run)=before&i=\(index)"))
            #expect(response.status == .ok)
        }
        try transport.replaceTrust(
            with: .secured(trust: [try TrustPolicy(host: "127.0.0.1", pins: pins, clientCertificate: second)])
        )
        for index in 0..<5 {
            let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/0?\(run)=after&i=\(index)"))
            #expect(response.status == .ok)
        }
        let entries = try await TrustRotationSupport.logEntries(env, .mtls, containing: run, count: 10)
        let before = entries.filter { $0.uri.contains("\(run)=before") }
        let after = entries.filter { $0.uri.contains("\(run)=after") }
        #expect(before.count == 5 && after.count == 5)
        #expect(
            before.allSatisfy {
                $0.sslClientVerify == "SUCCESS" && $0.sslClientSubject.contains("CN=courier-test-client")
            }
        )
        #expect(
            after.allSatisfy {
                $0.sslClientVerify == "SUCCESS" && $0.sslClientSubject.contains("CN=courier-rotated-client")
            }
        )
        #expect(Set(before.map(\.connection)).isDisjoint(with: Set(after.map(\.connection))))
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func aClientCertificateFromAClosureIsRenewedBeforeItExpires() async throws {
        let env = try await TestServers.shared()
        let shortLived = try TrustRotationSupport.clientCertificate(env, name: "courier-short-lived", days: 1)
        let renewed = try TrustRotationSupport.clientCertificate(env, name: "courier-renewed", days: 365)
        let calls = Locked(0)
        // A day-long certificate is inside a two-day margin at once: the first request waits
        // for it, and the transport asks for the next one in the background.
        let policy = try TrustPolicy(
            host: "127.0.0.1",
            pins: [try SecuritySupport.pin(env.leafPin)],
            renewalMargin: .seconds(2 * 86_400)
        ) {
            let call = calls.withLock { count in
                count += 1
                return count
            }
            return call == 1 ? shortLived : renewed
        }
        #expect(policy.providesClientCertificate)
        #expect(policy.clientCertificate == nil)
        let transport = TrustRotationSupport.transport(env, try .secured(trust: [policy]))
        let session = Session(configuration: .init(baseURL: env.url(.mtls)), transport: transport)
        let run = "client-renewal-\(UUID().uuidString.prefix(8))"
        let first = try await session.send(HTTPRequest(method: .get, path: "/bytes/0?\(run)=first"))
        #expect(first.status == .ok)
        let firstEntry = try await TrustRotationSupport.logEntries(env, .mtls, containing: "\(run)=first", count: 1)
        #expect(firstEntry.first?.sslClientSubject.contains("CN=courier-short-lived") == true)

        var presentedRenewed = false
        for index in 0..<100 where !presentedRenewed {
            let marker = "\(run)=next&i=\(index)"
            #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/0?\(marker)")).status == .ok)
            let entry = try await TrustRotationSupport.logEntries(env, .mtls, containing: marker, count: 1)
            presentedRenewed = entry.first?.sslClientSubject.contains("CN=courier-renewed") == true
            if !presentedRenewed { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(presentedRenewed, "the renewed certificate was never presented")
        // The renewed certificate is far from its end: the closure is not asked again.
        for index in 0..<5 {
            #expect(
                try await session.send(HTTPRequest(method: .get, path: "/bytes/0?\(run)=last&i=\(index)")).status == .ok
            )
        }
        #expect(calls.value == 2)
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func aRequestWaitingForAFirstCertificateEndsAtItsDeadlineOrWhenCancelled() async throws {
        let env = try await TestServers.shared()
        let certificate = try TrustRotationSupport.clientCertificate(env, name: "courier-late", days: 2)
        // The closure hangs until the test opens the gate, as an identity agent that is down.
        let gate = AsyncStream<Void>.makeStream()
        let calls = Locked(0)
        let policy = try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.leafPin)]) {
            calls.withLock { $0 += 1 }
            for await _ in gate.stream {}
            return certificate
        }
        let transport = TrustRotationSupport.transport(env, try .secured(trust: [policy]))
        let bounded = Session(
            configuration: .init(baseURL: env.url(.mtls), timeout: .milliseconds(300)),
            transport: transport
        )
        await #expect(throws: CourierError(.timedOut)) {
            _ = try await bounded.send(HTTPRequest(method: .get, path: "/bytes/0"))
        }
        let unbounded = Session(configuration: .init(baseURL: env.url(.mtls), timeout: nil), transport: transport)
        let waiting = Task { try await unbounded.send(HTTPRequest(method: .get, path: "/bytes/0")) }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { _ = try await waiting.value }
        // The load went on meanwhile, once: when the closure answers, requests go through.
        gate.continuation.finish()
        #expect(try await unbounded.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .ok)
        #expect(calls.value == 1)
        await bounded.shutdown()
        await unbounded.shutdown()
        await transport.shutdown()
    }

    @Test func aFailingClosureFailsTheFirstRequestWithTheReason() async throws {
        let env = try await TestServers.shared()
        struct VaultDown: Error {}
        let policy = try TrustPolicy(host: "127.0.0.1", pins: [try SecuritySupport.pin(env.leafPin)]) {
            throw VaultDown()
        }
        let transport = TrustRotationSupport.transport(env, try .secured(trust: [policy]))
        let session = Session(configuration: .init(baseURL: env.url(.mtls)), transport: transport)
        await #expect(throws: CourierError.self) {
            do {
                _ = try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
            } catch let error as CourierError {
                #expect(error.kind == .invalidConfiguration)
                #expect(error.underlying is VaultDown)
                throw error
            }
        }
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func secureTrustIsNeverReplacedByAnUnsecuredConfiguration() async throws {
        let env = try await TestServers.shared()
        let pins = [try SecuritySupport.pin(env.leafPin)]
        let secured = try SecurityConfiguration.secured(trust: [try TrustPolicy(host: "127.0.0.1", pins: pins)])
        let transport = TrustRotationSupport.transport(env, secured)
        let session = Session(configuration: .init(baseURL: env.url(.https)), transport: transport)
        for weaker in [SecurityConfiguration.unpinned, .unpinned(minimumTLSVersion: .v1_3)] {
            #expect {
                try transport.replaceTrust(with: weaker)
            } throws: { ($0 as? CourierError)?.kind == .invalidConfiguration }
        }
        #expect(transport.security == secured)
        #expect(transport.security.isSecured)
        // Still enforced: an untrusted host is refused before anything is sent.
        await #expect(throws: CourierError.self) {
            _ = try await session.send(HTTPRequest(method: .get, scheme: "https", authority: "localhost:1", path: "/"))
        }
        #expect(try await session.send(HTTPRequest(method: .get, path: "/bytes/0")).status == .ok)

        let plain = CurlTransport(configuration: .init(proxy: .none))
        #expect {
            try plain.replaceTrust(with: secured)
        } throws: { ($0 as? CourierError)?.kind == .invalidConfiguration }
        await plain.shutdown()
        await session.shutdown()
        await transport.shutdown()
    }

    @Test func aReplacementMayNotWeakenTheTLSMinimumOrChangeTheHosts() throws {
        let pin = SecuritySupport.unrelatedPin
        let current = try SecurityConfiguration.secured(
            trust: [try TrustPolicy(host: "api.example.com", pins: [pin])],
            minimumTLSVersion: .v1_3
        )
        let lowerTLS = try SecurityConfiguration.secured(trust: [try TrustPolicy(host: "api.example.com", pins: [pin])])
        let otherHost = try SecurityConfiguration.secured(
            trust: [
                try TrustPolicy(host: "api.example.com", pins: [pin]),
                try TrustPolicy(host: "evil.example", pins: [pin]),
            ],
            minimumTLSVersion: .v1_3
        )
        let debugger = try SecurityConfiguration.secured(
            trust: [try TrustPolicy(host: "api.example.com", pins: [pin])],
            minimumTLSVersion: .v1_3,
            detectsDebugger: true
        )
        for next in [lowerTLS, otherHost, debugger, .unpinned] {
            #expect {
                try TransportTrust.check(next, replacing: current)
            } throws: { ($0 as? CourierError)?.kind == .invalidConfiguration }
        }
        let rotated = try SecurityConfiguration.secured(
            trust: [try TrustPolicy(host: "api.example.com", pins: [pin], pinMode: .audit)],
            minimumTLSVersion: .v1_3
        )
        try TransportTrust.check(rotated, replacing: current)
    }
}
