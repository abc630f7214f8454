import Crypto
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Large bodies: buffered, streamed with back-pressure, observed with progress.
/// Serialized, so that the memory measurements do not see each other.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct StreamingTests {
    @Test func streamsSixtyFourMiBWithFlatMemory() async throws {
        let env = try await TestServers.shared()
        // A slow consumer: the transfer must pause, not buffer.
        let growth = try await smallestGrowth(env, bufferSize: 512 << 10, below: 24 << 20) { chunks in
            if chunks % 64 == 0 { try await Task.sleep(for: .milliseconds(1)) }
        }
        #expect(growth < 24 << 20, "RSS grew by \(growth >> 20) MiB while streaming")
    }

    /// A consumer that is always behind: the buffer never empties, the transfer pauses and
    /// resumes thousands of times, and memory holds about the buffer, never the body.
    @Test func aConsumerAlwaysBehindTheServerHoldsTheBufferNotTheBody() async throws {
        let env = try await TestServers.shared()
        // Slower than loopback on every chunk: the producer refills the buffer before the
        // consumer has emptied it.
        let growth = try await smallestGrowth(env, bufferSize: 1 << 20, below: 16 << 20) { _ in
            try await Task.sleep(for: .microseconds(100))
        }
        #expect(growth < 16 << 20, "RSS grew by \(growth >> 20) MiB behind a slow consumer")
    }

    /// Streams 64 MiB up to three times, pacing the consumer with `pace` after each chunk (given
    /// the chunks read so far), and returns the smallest growth of RSS: RSS is process-wide, so
    /// other work in the process cannot fail the test. Buffering would add 64 MiB every time.
    private func smallestGrowth(
        _ env: TestEnvironment,
        bufferSize: Int,
        below bound: Int,
        pace: (Int) async throws -> Void
    ) async throws -> Int {
        let file = env.file("64m")
        let session = SessionFactory.session(env, .http) { $0.streamBufferSize = bufferSize }
        var smallest = Int.max
        for _ in 0..<3 where smallest >= bound {
            let baseline = residentMemoryBytes()
            var peak = baseline
            var hasher = SHA256()
            var received = 0
            var chunks = 0
            let response = try await session.stream(HTTPRequest(method: .get, path: file.urlPath))
            #expect(response.status == .ok)
            #expect(response.body.isStreamed)
            for try await chunk in response.body {
                hasher.update(data: chunk)
                received += chunk.count
                chunks += 1
                if chunks % 16 == 0 { peak = max(peak, residentMemoryBytes()) }
                try await pace(chunks)
            }
            #expect(received == file.size)
            #expect(hasher.finalize().hex == file.sha256)
            smallest = min(smallest, peak - baseline)
        }
        await session.shutdown()
        return smallest
    }

    @Test func buffersSixtyFourMiBWithProgressEvents() async throws {
        let env = try await TestServers.shared()
        let file = env.file("64m")
        let session = SessionFactory.session(env, .http)
        let task = session.task(for: HTTPRequest(method: .get, path: file.urlPath))
        var progress: [NetworkTask.Progress] = []
        var states: [NetworkTask.State] = []
        for await event in task.events {
            switch event {
            case .downloadProgress(let value): progress.append(value)
            case .stateChanged(let state): states.append(state)
            case .uploadProgress: break
            }
        }
        let response = try await task.value
        #expect(response.data.count == file.size)
        #expect(response.data.sha256Hex == file.sha256)
        #expect(progress.count > 10)
        #expect(progress.last?.completedBytes == Int64(file.size))
        #expect(progress.last?.expectedBytes == Int64(file.size))
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0.completedBytes < $1.completedBytes })
        #expect(states.first == .running)
        #expect(states.last == .completed)
        #expect(task.state == .completed)
        await session.shutdown()
    }

    @Test func droppingAStreamedBodyCancelsTheTransfer() async throws {
        let env = try await TestServers.shared()
        let transport = CurlTransport(configuration: .init(proxy: .none))
        let session = Session(configuration: .init(baseURL: env.nginxHTTP), transport: transport)
        do {
            let response = try await session.stream(HTTPRequest(method: .get, path: "/bytes/64m"))
            var iterator = response.body.makeAsyncIterator()
            _ = try await iterator.next()
        }
        try await waitUntil { transport.statistics.activeTransfers == 0 }
        #expect(transport.statistics.activeTransfers == 0)
        await session.shutdown()
    }
}

/// Polls `condition` every 20 ms for up to `timeout`.
func waitUntil(timeout: Duration = .seconds(5), _ condition: () -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while !condition() && ContinuousClock.now < deadline {
        try await Task.sleep(for: .milliseconds(20))
    }
}
