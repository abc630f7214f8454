import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// A streamed body hands each chunk to its consumer as soon as it arrives, however small,
/// even when nothing follows it for a while: an event stream must never wait for more bytes.
@Suite(.timeLimit(.minutes(1)))
struct EventStreamDeliveryTests {
    /// The fault server sends the next event only once the consumer has acknowledged the one
    /// before (`/events`, `/ack`): a body stream that held an event back until more bytes came
    /// would never see the next one, and the server cuts the stream off after 10 s.
    @Test(arguments: [false, true])
    func eachEventReachesTheConsumerBeforeTheNextIsSent(overTLS: Bool) async throws {
        let env = try await TestServers.shared()
        var transportConfiguration = CurlTransport.Configuration(maximumConnectionsPerHost: 4, proxy: .none)
        transportConfiguration.trustedCertificateBundlePath = env.caBundle
        let session = Session(
            configuration: .init(baseURL: overTLS ? env.faultsTLS : env.faults),
            transport: CurlTransport(configuration: transportConfiguration)
        )
        let key = uniqueFaultKey("events")
        let count = 5
        let response = try await session.stream(
            HTTPRequest(method: .get, path: "/events?key=\(key)&count=\(count)")
        )
        #expect(response.status == .ok)
        #expect(response.headerFields[.contentType] == "text/event-stream")
        var pending = ""
        var events: [String] = []
        for try await chunk in response.body {
            pending += String(decoding: chunk, as: UTF8.self)
            while let end = pending.range(of: "\n\n") {
                events.append(String(pending[..<end.lowerBound]))
                pending.removeSubrange(..<end.upperBound)
                let acknowledged = try await session.send(HTTPRequest(method: .get, path: "/ack?key=\(key)"))
                #expect(acknowledged.status == .ok)
            }
        }
        #expect(events == (1...count).map { "id: \($0)\ndata: event \($0)" })
        #expect(pending.isEmpty)
        let seen = try await env.faultStats(forKey: key)
        #expect(seen.dropped == 0, "the server cut the stream off: an event was held back")
        await session.shutdown()
    }
}
