#if OpenAPI
import Courier
import CourierOpenAPI
import Crypto
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// Large bodies through the generated client, both ways, never held whole in memory.
@Suite(.timeLimit(.minutes(1)))
struct GeneratedClientStreamingTests {
    let servers: OpenAPIServers
    let session = Session()

    init() async throws {
        servers = try await OpenAPIServers.shared()
    }

    var client: Client {
        Client(serverURL: servers.nginx, transport: CourierClientTransport(session: session))
    }

    @Test func aDownloadStreamsInChunksWithItsLength() async throws {
        let output = try await client.downloadFile(path: .init(name: "64m"))
        let body = try output.ok.body.binary
        #expect(body.length == .known(64 << 20))
        #expect(body.iterationBehavior == .single)
        var hash = SHA256()
        var received = 0
        var chunks = 0
        var largestChunk = 0
        for try await chunk in body {
            hash.update(data: chunk)
            received += chunk.count
            chunks += 1
            largestChunk = max(largestChunk, chunk.count)
        }
        #expect(received == 64 << 20)
        #expect(hash.finalize().hex == servers.fileDigests["64m"])
        // Handed over as it arrives: many chunks, none near the size of the body.
        #expect(chunks > 64)
        #expect(largestChunk <= 4 << 20)
        await session.shutdown()
    }

    @Test func anUploadArrivesWhole() async throws {
        let chunks = PatternChunks(count: 128, size: 64 * 1024)  // 8 MiB, made as they are asked for
        let body = HTTPBody(chunks, length: .known(Int64(chunks.totalSize)), iterationBehavior: .single)
        let output = try await client.uploadBytes(body: .binary(body))
        let echo = try output.ok.body.json
        #expect(echo.method == "POST")
        #expect(echo.length == Int64(chunks.totalSize))
        #expect(echo.sha256 == chunks.expectedDigest)
        #expect(chunks.made.value == 128)
        await session.shutdown()
    }

    @Test func anUploadIsSentWhileItIsStillBeingMade() async throws {
        // The second half of the body is made only once the server holds the first half: a
        // transport that collected the body before sending would never get there.
        let server = try GatedUploadServer(threshold: 64 * 64 * 1024)
        var chunks = PatternChunks(count: 128, size: 64 * 1024)
        chunks.gate = (index: 64, open: { await server.receivedThreshold() })
        let body = HTTPBody(chunks, length: .known(Int64(chunks.totalSize)), iterationBehavior: .single)
        let gated = Client(
            serverURL: try #require(URL(string: "http://127.0.0.1:\(server.port)")),
            transport: CourierClientTransport(session: session)
        )
        let echo = try await gated.uploadBytes(body: .binary(body)).ok.body.json
        #expect(echo.length == Int64(chunks.totalSize))
        #expect(echo.sha256 == chunks.expectedDigest)
        await session.shutdown()
    }
}
#endif
