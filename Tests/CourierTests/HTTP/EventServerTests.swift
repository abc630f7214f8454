import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The event streams the server-sent events tests run against, read through today's streamed
/// responses: the SSE server (sse-starlette on uvicorn) and the gateway's stream behind a token.
@Suite(.timeLimit(.minutes(1)))
struct EventServerTests {
    private static let lastEventID = HTTPField.Name("Last-Event-ID")!

    /// The whole body of a streamed response, read chunk by chunk as it arrives.
    private func text(of response: Response) async throws -> String {
        var body = Data()
        for try await chunk in response.body { body.append(chunk) }
        return String(decoding: body, as: UTF8.self)
    }

    @Test func aStreamCarriesItsEventsInOrder() async throws {
        let env = try await TestServers.shared()
        let session = env.sseSession()
        let key = uniqueFaultKey("events")
        let response = try await session.stream(HTTPRequest(method: .get, path: "/events?count=3&key=\(key)"))
        #expect(response.status == .ok)
        #expect(response.headerFields[.contentType]?.hasPrefix("text/event-stream") == true)
        let body = try await text(of: response)
        let ids = ["id: 1\r\n", "id: 2\r\n", "id: 3\r\n"].map { body.range(of: $0)?.lowerBound }
        #expect(ids.allSatisfy { $0 != nil }, "\(body)")
        #expect(ids.compactMap { $0 } == ids.compactMap { $0 }.sorted())
        #expect(!body.contains("id: 4"))
        let stats = try await env.sseStats(key: key)
        #expect(stats.lastEventIDs == [nil])
        #expect(stats.eventsSent == 3)
        #expect(stats.completed == 1)
        await session.shutdown()
    }

    @Test func aReconnectResumesAfterItsLastEventID() async throws {
        let env = try await TestServers.shared()
        let session = env.sseSession()
        let key = uniqueFaultKey("resume")
        var request = HTTPRequest(method: .get, path: "/events?count=3&key=\(key)")
        request.headerFields[Self.lastEventID] = "2"
        let body = try await text(of: try await session.stream(request))
        #expect(body.hasPrefix("id: 3\r\n"), "\(body)")
        #expect(!body.contains("id: 1\r\n") && !body.contains("id: 2\r\n"))
        request.headerFields[Self.lastEventID] = "3"
        let done = try await session.stream(request)
        #expect(done.status == .noContent)
        #expect(try await env.sseStats(key: key).lastEventIDs == ["2", "3"])
        await session.shutdown()
    }

    @Test func aDroppedStreamFailsAfterTheEventsItCarried() async throws {
        let env = try await TestServers.shared()
        let session = env.sseSession()
        let key = uniqueFaultKey("drop")
        let response = try await session.stream(
            HTTPRequest(method: .get, path: "/events?count=4&drop_every=2&key=\(key)")
        )
        var body = Data()
        let failure = await #expect(throws: CourierError.self) {
            for try await chunk in response.body { body.append(chunk) }
        }
        let text = String(decoding: body, as: UTF8.self)
        #expect(text.contains("id: 2\r\n") && !text.contains("id: 3"), "\(text)")
        #expect(failure?.kind == .connectionClosed, "\(String(describing: failure))")
        #expect(try await env.sseStats(key: key).drops == 1)
        await session.shutdown()
    }

    @Test func noContentIsAStatusNotAStream() async throws {
        let env = try await TestServers.shared()
        let session = env.sseSession()
        let response = try await session.stream(HTTPRequest(method: .get, path: "/nocontent"))
        #expect(response.status == .noContent)
        #expect(try await text(of: response).isEmpty)
        await session.shutdown()
    }

    @Test func theGatewayStreamNeedsAToken() async throws {
        let env = try await TestServers.shared()
        let gateway = try #require(env.gateway, "the gateway did not start: \(env.serviceErrors)")
        let session = Session(
            configuration: .init(baseURL: gateway),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let key = uniqueFaultKey("gateway")
        let refused = try await session.stream(HTTPRequest(method: .get, path: "/api/events?count=3&key=\(key)"))
        #expect(refused.status == .unauthorized)
        #expect(refused.headerFields[.wwwAuthenticate]?.contains(#"error="invalid_token""#) == true)
        _ = try await text(of: refused)

        var request = HTTPRequest(method: .get, path: "/api/events?count=3&key=\(key)")
        request.headerFields[.authorization] = "Bearer \(try await env.deviceAccessToken())"
        let response = try await session.stream(request)
        #expect(response.status == .ok)
        let body = try await text(of: response)
        #expect(body.contains("id: 1\n") && body.contains("id: 3\n") && !body.contains("id: 4\n"), "\(body)")
        let connections = try await env.gatewayEventConnections(key: key)
        #expect(connections.map(\.status) == [401, 200])
        #expect(connections.first?.token == nil)
        #expect(connections.last?.token?.count == 12)
        #expect(connections.last?.end == "done")
        await session.shutdown()
    }
}
