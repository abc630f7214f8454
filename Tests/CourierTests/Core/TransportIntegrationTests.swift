import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// CurlTransport against the suite's real nginx.
@Suite(.timeLimit(.minutes(2)))
struct TransportIntegrationTests {
    @Test(arguments: ["0", "1k", "1m"])
    func downloadsBodiesOfEverySize(name: String) async throws {
        let env = try await TestServers.shared()
        let file = env.file(name)
        let session = SessionFactory.session(env, .http)
        let response = try await session.send(HTTPRequest(method: .get, path: file.urlPath))
        #expect(response.status == .ok)
        #expect(response.data.count == file.size)
        #expect(response.data.sha256Hex == file.sha256)
        #expect(response.metrics?.bytesReceived == Int64(file.size))
        await session.shutdown()
    }

    @Test func reusesKeepAliveConnections() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let first = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        let second = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        #expect(first.metrics?.isConnectionReused == false)
        #expect(second.metrics?.isConnectionReused == true)
        #expect(second.metrics?.httpVersion == .http1_1)
        await session.shutdown()
    }

    @Test func reusesEasyHandlesBetweenRequests() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(proxy: .none))
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        for _ in 0..<10 {
            let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
            #expect(response.data.count == 1024)
        }
        #expect(transport.statistics.easyHandles == 1)
        #expect(transport.statistics.activeTransfers == 0)
        await session.shutdown()
        await transport.shutdown()
        #expect(transport.statistics.easyHandles == 0)
    }

    @Test func usesHTTP2OverTLSAndMultiplexes() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let warmup = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        #expect(warmup.metrics?.httpVersion == .http2)
        #expect(warmup.metrics.map { $0.tlsHandshake > .zero } == true)
        let responses = try await withThrowingTaskGroup(of: Response.self) { group in
            for _ in 0..<20 { group.addTask { try await session.send(HTTPRequest(method: .get, path: "/bytes/1k")) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(responses.allSatisfy { $0.metrics?.httpVersion == .http2 && $0.data.count == 1024 })
        #expect(responses.allSatisfy { $0.metrics?.isConnectionReused == true })
        await session.shutdown()
    }

    @Test func twoHundredConcurrentRequestsAllSucceed() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let sizes = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for index in 0..<200 {
                group.addTask {
                    let name = index % 2 == 0 ? "/bytes/1k" : "/echo?n=\(index)"
                    let response = try await session.send(HTTPRequest(method: .get, path: name))
                    #expect(response.status == .ok)
                    if index % 2 == 1 {
                        let echo = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
                        #expect(echo?["uri"] as? String == "/echo?n=\(index)")
                    }
                    return (index, response.data.count)
                }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(sizes.count == 200)
        #expect(sizes.filter { $0.key % 2 == 0 }.allSatisfy { $0.value == 1024 })
        await session.shutdown()
    }

    @Test func midBodyCloseIsATypedError() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/truncated"))
        }
        #expect(error?.kind == .connectionClosed)
        #expect(error?.curlCode == 18)
        await session.shutdown()
    }

    @Test func totalTimeoutFires() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http) { $0.timeout = .milliseconds(700) }
        let start = ContinuousClock.now
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/stall?seconds=10"))
        }
        #expect(error?.kind == .timedOut)
        #expect(ContinuousClock.now - start < .seconds(5))
        await session.shutdown()
    }

    @Test func connectFailureIsATypedError() async throws {
        // A port that was just free: nothing listens there.
        let port = try freePort()
        let session = Session(
            configuration: .init(baseURL: URL(string: "http://127.0.0.1:\(port)")!),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/"))
        }
        #expect(error?.kind == .couldNotConnect)
        #expect(error?.message.isEmpty == false)
        await session.shutdown()
    }

    @Test func untrustedCertificateFailsWithTLSError() async throws {
        let env = try await TestServers.shared()
        // No CA bundle: the suite's test CA is not in the system store.
        let session = Session(
            configuration: .init(baseURL: env.nginxHTTPS),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        }
        #expect(error?.kind == .tlsFailure)
        await session.shutdown()
    }

    @Test func uploadsBodiesFromMemoryFileAndStream() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let payload = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) })

        let fromMemory = try await session.send(HTTPRequest(method: .post, path: "/echo"), body: .data(payload))
        #expect(try echoedLength(fromMemory) == payload.count)
        #expect(try echoedSHA(fromMemory) == payload.sha256Hex)

        let path = FileManager.default.temporaryDirectory.appendingPathComponent("courier-upload-\(UUID())").path
        try payload.write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try await session.send(HTTPRequest(method: .put, path: "/echo"), body: try .file(atPath: path))
        #expect(try echoedSHA(fromFile) == payload.sha256Hex)

        let chunks = AsyncStream<Data> { continuation in
            for offset in stride(from: 0, to: payload.count, by: 40_000) {
                continuation.yield(payload[offset..<min(offset + 40_000, payload.count)])
            }
            continuation.finish()
        }
        let fromStream = try await session.send(HTTPRequest(method: .post, path: "/echo"), body: .stream(chunks))
        #expect(try echoedSHA(fromStream) == payload.sha256Hex)
        await session.shutdown()
    }

    @Test func failingUploadStreamFailsTheRequest() async throws {
        struct Broken: Error {}
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let chunks = AsyncThrowingStream<Data, any Error> { continuation in
            continuation.yield(Data(repeating: 1, count: 1000))
            continuation.finish(throwing: Broken())
        }
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .post, path: "/echo"), body: .stream(chunks))
        }
        #expect(error?.kind == .requestBodyFailed)
        await session.shutdown()
    }

    @Test func bufferedBodyOverTheLimitFails() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http) { $0.maximumResponseBodySize = 100_000 }
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/bytes/1m"))
        }
        #expect(error?.kind == .responseTooLarge)
        await session.shutdown()
    }

    @Test func shutdownFailsLaterRequests() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        _ = try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
        await session.shutdown()
        await #expect(throws: CourierError(.shutDown)) {
            try await session.send(HTTPRequest(method: .get, path: "/bytes/0"))
        }
    }

    private func echoedLength(_ response: Response) throws -> Int? {
        let echo = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
        return echo?["length"] as? Int
    }

    private func echoedSHA(_ response: Response) throws -> String? {
        let echo = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
        return echo?["sha256"] as? String
    }
}
