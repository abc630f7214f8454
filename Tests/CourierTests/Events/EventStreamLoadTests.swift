import Foundation
import Synchronization
import Testing

@testable import Courier

/// A thousand event streams at once on one session, against the real event-stream server: every
/// event arrives in order, and the process's memory does not grow with the events once the
/// streams are open. Serialized: the memory measurement must not see other tests.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct EventStreamLoadTests {
    @Test func aThousandStreamsOnOneSessionDeliverEveryEventWithFlatMemory() async throws {
        let env = try await TestServers.shared()
        let key = "load-\(UInt64.random(in: 0...UInt64.max))"
        let streams = 1000
        let eventsPerStream = 40
        // Over HTTP/1.1 each open stream holds a connection of its own.
        let session = Session(
            configuration: .init(baseURL: env.sse),
            transport: CurlTransport(configuration: .init(maximumConnectionsPerHost: streams, proxy: .none))
        )
        let configuration = ServerSentEvents.Configuration(reconnectionDelay: .milliseconds(10))
        let request = ResourceRequest(path: "/events?count=\(eventsPerStream)&size=256&interval=200&key=\(key)")
        let counts = Counts()
        let (warm, warmContinuation) = AsyncStream.makeStream(of: Void.self)

        let received = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<streams {
                group.addTask {
                    var count = 0
                    for try await event in session.events(request, configuration: configuration) {
                        count += 1
                        if event.id != String(count) { counts.outOfOrder.add(1, ordering: .relaxed) }
                        if count == 10, counts.warmedUp.add(1, ordering: .relaxed).newValue == streams {
                            warmContinuation.yield()
                        }
                    }
                    return count
                }
            }
            // Every stream open and ten events in: what memory holds from here on is flat.
            var iterator = warm.makeAsyncIterator()
            await iterator.next()
            let warmResident = residentMemoryBytes()
            let sampler = Task {
                var peak = warmResident
                while !Task.isCancelled {
                    peak = max(peak, residentMemoryBytes())
                    try? await Task.sleep(for: .milliseconds(100))
                }
                return peak
            }
            var total = 0
            for try await count in group { total += count }
            sampler.cancel()
            let growth = await sampler.value - warmResident
            print(
                "[figures] 1,000 event streams on one session: RSS \(warmResident >> 20) MiB once open, \(growth >> 10) KiB more at the peak after"
            )
            // 30 events more per stream, 30,000 events of 256 bytes in all (7.3 MiB): holding
            // them, or anything per event, would show here.
            #expect(growth < 16 << 20, "memory grew by \(growth >> 10) KiB after the streams were open")
            return total
        }
        #expect(received == streams * eventsPerStream)
        #expect(counts.outOfOrder.load(ordering: .relaxed) == 0)
        let stats = try await env.sseStats(key: key)
        #expect(stats.eventsSent == streams * eventsPerStream)
        #expect(stats.completed == streams)
        #expect(stats.noContent == streams)
        await session.shutdown()
    }
}

/// What the streams of the load test count together.
private final class Counts: Sendable {
    /// Streams that received their tenth event.
    let warmedUp = Atomic<Int>(0)
    /// Events whose ID was not the next one.
    let outOfOrder = Atomic<Int>(0)
}
