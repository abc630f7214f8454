import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// An HTTP/2 stream the server refused (RST_STREAM with REFUSED_STREAM) was not processed, so
/// any method goes again, once, on a fresh stream; the fault server `h2faults` refuses on demand
/// and counts the streams it saw and the ones it processed.
@Suite(.timeLimit(.minutes(1)))
struct RefusedStreamTests {
    private func session(_ env: TestEnvironment) -> Session {
        var transport = CurlTransport.Configuration(proxy: .none)
        transport.trustedCertificateBundlePath = env.caBundle
        return Session(configuration: .init(baseURL: env.h2faults), transport: CurlTransport(configuration: transport))
    }

    private func stats(_ session: Session, key: String) async throws -> [String: Any] {
        let response = try await session.send(HTTPRequest(method: .get, path: "/stats?key=\(key)"))
        return try JSONSerialization.jsonObject(with: response.data) as? [String: Any] ?? [:]
    }

    private func postRefusedOnce(_ session: Session, key: String) async throws -> [String: Any] {
        let response = try await session.send(
            HTTPRequest(method: .post, path: "/refuse-once?key=\(key)"),
            body: .string("payload")
        )
        #expect(response.statusCode == 200)
        #expect(response.metrics?.httpVersion == .http2)
        return try JSONSerialization.jsonObject(with: response.data) as? [String: Any] ?? [:]
    }

    @Test func aRefusedPOSTGoesAgainOnAFreshConnection() async throws {
        let env = try await TestServers.shared()
        let session = session(env)
        let key = "fresh-\(UUID().uuidString)"
        let answer = try await postRefusedOnce(session, key: key)
        #expect(answer["attempt"] as? Int == 2)
        #expect(answer["body_length"] as? Int == 7)
        let seen = try await stats(session, key: key)
        #expect(seen["streams"] as? Int == 2)
        #expect(seen["processed"] as? Int == 1)
        let connections = seen["connections"] as? [Int] ?? []
        #expect(connections.count == 2 && connections[0] != connections[1], "\(connections)")
        await session.shutdown()
    }

    /// On a reused connection libcurl 7.88 words a refused stream as it words a connection that
    /// died under a request the server may have processed: without proof, a POST does not go
    /// again. (An idempotent request does.)
    @Test func aPOSTRefusedOnAReusedConnectionIsNotSentAgainWithoutProof() async throws {
        let env = try await TestServers.shared()
        let session = session(env)
        let key = "reused-\(UUID().uuidString)"
        _ = try await session.send(HTTPRequest(method: .get, path: "/"))  // the connection to reuse
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .post, path: "/refuse-once?key=\(key)"), body: .string("x"))
        }
        #expect(error?.kind == .connectionClosed, "\(String(describing: error))")
        let put = try await session.send(
            HTTPRequest(method: .put, path: "/refuse-once?key=\(key)-put"),
            body: .string("x")
        )
        #expect(put.statusCode == 200)
        let seen = try await stats(session, key: key)
        #expect(seen["processed"] as? Int == 0)
        await session.shutdown()
    }

    @Test func aPOSTRefusedTwiceFailsWithoutAThirdStream() async throws {
        let env = try await TestServers.shared()
        let session = session(env)
        let key = "always-\(UUID().uuidString)"
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .post, path: "/refuse-always?key=\(key)"), body: .string("x"))
        }
        #expect(error?.kind == .connectionClosed, "\(String(describing: error))")
        let seen = try await stats(session, key: key)
        #expect(seen["streams"] as? Int == 2)
        #expect(seen["processed"] as? Int == 0)
        await session.shutdown()
    }
}
