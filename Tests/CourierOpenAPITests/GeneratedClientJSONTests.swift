#if OpenAPI
import Courier
import CourierOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The generated client through a session against httpbin (behind nginx's /httpbin): JSON both
/// ways, a status the document does not list, and a server that is not there.
@Suite(.timeLimit(.minutes(1)))
struct GeneratedClientJSONTests {
    let servers: OpenAPIServers
    let session = Session()

    init() async throws {
        servers = try await OpenAPIServers.shared()
    }

    func client(_ serverURL: URL) -> Client {
        Client(serverURL: serverURL, transport: CourierClientTransport(session: session))
    }

    @Test func getSendsTheQueryUnderTheServerURLsPathAndDecodesJSON() async throws {
        let echo = try await client(servers.httpbin).getEcho(query: .init(greeting: "hello wörld"))
        let body = try echo.ok.body.json
        #expect(body.args.additionalProperties == ["greeting": "hello wörld"])
        #expect(body.headers.additionalProperties["Accept"] == "application/json")
        #expect(body.headers.additionalProperties["User-Agent"]?.contains("Courier/") == true)
        await session.shutdown()
    }

    @Test func postSendsAJSONBody() async throws {
        let message = Components.Schemas.Message(text: "ping", count: 3)
        let echo = try await client(servers.httpbin).postMessage(body: .json(message))
        let body = try echo.ok.body.json
        #expect(body.method == "POST")
        #expect(body.json == message)
        #expect(body.headers.additionalProperties["Content-Type"] == "application/json; charset=utf-8")
        await session.shutdown()
    }

    @Test func aStatusTheDocumentDoesNotListIsUndocumented() async throws {
        let output = try await client(servers.httpbin).getStatus(path: .init(code: 418))
        guard case .undocumented(let status, let payload) = output else {
            Issue.record("expected an undocumented status, got \(output)")
            return
        }
        #expect(status == 418)
        let teapot = try await String(collecting: try #require(payload.body), upTo: 1 << 16)
        #expect(teapot.contains("teapot"))
        await session.shutdown()
    }

    @Test func aRefusedConnectionIsACourierErrorInsideClientError() async throws {
        let closed = try #require(URL(string: "http://127.0.0.1:\(try LoopbackListener.refusingPort())"))
        let error = await #expect(throws: ClientError.self) {
            try await client(closed).getEcho()
        }
        let courier = try #require(error?.underlyingError as? CourierError)
        #expect(courier.kind == .couldNotConnect)
        #expect(error?.operationID == "getEcho")
        await session.shutdown()
    }
}
#endif
