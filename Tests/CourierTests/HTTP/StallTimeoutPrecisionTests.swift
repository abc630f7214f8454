import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The stall timeout is the longest a transfer moves no byte: it fires that long after the last
/// byte, within 100 ms, however much had moved before (the fault server's `/stall-after` sends
/// a head and N body bytes, then nothing), and an upload the server stops reading stalls too.
@Suite(.timeLimit(.minutes(1)))
struct StallTimeoutPrecisionTests {
    private static let stall = Duration.seconds(2)

    @Test(arguments: [1, 64 << 10])
    func aStreamedBodyStallsOnTimeAfterItsLastByte(bytes: Int) async throws {
        let env = try await TestServers.shared()
        let session = Session(
            configuration: .init(baseURL: env.faults, timeout: .seconds(20), stallTimeout: Self.stall),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let clock = ContinuousClock()
        let response = try await session.stream(
            HTTPRequest(method: .get, path: "/stall-after?bytes=\(bytes)&seconds=10")
        )
        var received = 0
        var lastByte = clock.now
        let error = await #expect(throws: CourierError.self) {
            for try await chunk in response.body {
                received += chunk.count
                lastByte = clock.now
            }
        }
        let delay = clock.now - lastByte
        #expect(error?.kind == .stalled, "\(String(describing: error))")
        #expect(received == bytes)
        #expect(
            delay >= Self.stall - .milliseconds(100) && delay <= Self.stall + .milliseconds(100),
            "fired after \(delay)"
        )
        await session.shutdown()
    }

    @Test(arguments: [1, 64 << 10])
    func aBufferedBodyStallsOnTimeAfterItsLastByte(bytes: Int) async throws {
        let env = try await TestServers.shared()
        let session = Session(
            configuration: .init(baseURL: env.faults, timeout: .seconds(20), stallTimeout: Self.stall),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/stall-after?bytes=\(bytes)&seconds=10"))
        }
        let elapsed = clock.now - start
        #expect(error?.kind == .stalled, "\(String(describing: error))")
        // The head and the bytes arrive at once on loopback: the stall begins with the request.
        #expect(
            elapsed >= Self.stall - .milliseconds(100) && elapsed <= Self.stall + .milliseconds(150),
            "failed after \(elapsed)"
        )
        await session.shutdown()
    }

    @Test func anUploadTheServerStopsReadingStalls() async throws {
        let env = try await TestServers.shared()
        let session = Session(
            configuration: .init(baseURL: env.faults, timeout: .seconds(20), stallTimeout: .seconds(1)),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let clock = ContinuousClock()
        let start = clock.now
        let error = await #expect(throws: CourierError.self) {
            try await session.send(
                HTTPRequest(method: .put, path: "/no-read?seconds=10"),
                body: .data(Data(count: 64 << 20))
            )
        }
        #expect(error?.kind == .stalled, "\(String(describing: error))")
        #expect(error?.message.contains("request body") == true, "\(String(describing: error?.message))")
        #expect(clock.now - start < .seconds(5))
        await session.shutdown()
    }
}
