#if OpenAPI
import Courier
import CourierOpenAPI
import Foundation
import OpenAPIRuntime
import Testing

/// Whether Courier may send a generated client's body again: a PUT answered 503 once is
/// retried only when its body can be iterated again.
@Suite(.timeLimit(.minutes(1)))
struct GeneratedClientRetryTests {
    let servers: OpenAPIServers
    let session = Session()

    init() async throws {
        servers = try await OpenAPIServers.shared()
    }

    func putOnce(failing key: String, body: HTTPBody) async throws -> Operations.PutStatus.Output {
        let client = Client(serverURL: servers.faults, transport: CourierClientTransport(session: session))
        return try await client.putStatus(
            path: .init(code: 503),
            query: .init(key: key, fail: 1),
            body: .binary(body)
        )
    }

    @Test func aBodyThatCanBeIteratedAgainIsRetried() async throws {
        let key = "openapi-replayable-\(UUID().uuidString)"
        let output = try await putOnce(failing: key, body: HTTPBody([UInt8](repeating: 7, count: 4096)))
        _ = try output.ok
        #expect(try await servers.faultRequests(key: key) == 2)
        await session.shutdown()
    }

    @Test func aBodyThatCanBeIteratedOnceIsSentOnce() async throws {
        let key = "openapi-single-\(UUID().uuidString)"
        let chunks = PatternChunks(count: 4, size: 1024)
        let body = HTTPBody(chunks, length: .known(Int64(chunks.totalSize)), iterationBehavior: .single)
        let output = try await putOnce(failing: key, body: body)
        guard case .undocumented(let status, _) = output else {
            Issue.record("expected the 503, got \(output)")
            return
        }
        #expect(status == 503)
        #expect(try await servers.faultRequests(key: key) == 1)
        #expect(chunks.made.value == 4)
        await session.shutdown()
    }
}
#endif
