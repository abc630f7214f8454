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

    /// How long after the server sent its last byte the request failed: both sides read the
    /// same wall clock (the server notes when it sent the bytes).
    private func delayAfterLastByte(streamed: Bool, bytes: Int) async throws -> (CourierError?, Duration) {
        let env = try await TestServers.shared()
        let session = Session(
            configuration: .init(baseURL: env.faults, timeout: .seconds(20), stallTimeout: Self.stall),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let key = uniqueFaultKey("stall")
        let request = HTTPRequest(method: .get, path: "/stall-after?bytes=\(bytes)&seconds=10&key=\(key)")
        var failure: CourierError?
        var received = 0
        do {
            if streamed {
                let response = try await session.stream(request)
                for try await chunk in response.body { received += chunk.count }
            } else {
                _ = try await session.send(request)
            }
        } catch let error as CourierError {
            failure = error
        }
        let failedAt = Date().timeIntervalSince1970
        if streamed { #expect(received == bytes) }
        let sentAt = try await env.faultStats(forKey: key).answerTimes.first ?? failedAt
        await session.shutdown()
        return (failure, .milliseconds(Int64((failedAt - sentAt) * 1000)))
    }

    @Test(arguments: [1, 64 << 10])
    func aStreamedBodyStallsOnTimeAfterItsLastByte(bytes: Int) async throws {
        let (error, delay) = try await delayAfterLastByte(streamed: true, bytes: bytes)
        #expect(error?.kind == .stalled, "\(String(describing: error))")
        #expect(
            delay >= Self.stall - .milliseconds(100) && delay <= Self.stall + .milliseconds(100),
            "fired after \(delay)"
        )
    }

    @Test(arguments: [1, 64 << 10])
    func aBufferedBodyStallsOnTimeAfterItsLastByte(bytes: Int) async throws {
        let (error, delay) = try await delayAfterLastByte(streamed: false, bytes: bytes)
        #expect(error?.kind == .stalled, "\(String(describing: error))")
        #expect(error?.receivedResponse == true)  // not sent again: the stall came mid-response
        #expect(
            delay >= Self.stall - .milliseconds(100) && delay <= Self.stall + .milliseconds(100),
            "fired after \(delay)"
        )
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
