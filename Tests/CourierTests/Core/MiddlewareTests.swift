import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The middleware chain: order, request and response filters, restarts.
@Suite(.timeLimit(.minutes(1)))
struct MiddlewareTests {
    /// Records the order in which middleware sees requests and responses.
    struct Tracer: Middleware {
        let name: String
        let trace: Locked<[String]>

        func intercept(
            _ request: HTTPRequest,
            body: RequestBody?,
            context: MiddlewareContext,
            next: Next
        ) async throws -> Response {
            trace.withLock { $0.append("→\(name)") }
            var request = request
            request.headerFields.append(HTTPField(name: HTTPField.Name("X-Trace")!, value: name))
            let response = try await next(request, body, context)
            trace.withLock { $0.append("←\(name)") }
            return response
        }
    }

    @Test func firstMiddlewareSeesTheRequestFirstAndTheResponseLast() async throws {
        let trace = Locked<[String]>([])
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .ok)) }
        let session = Session(
            configuration: .init(
                baseURL: URL(string: "https://api.example.com/v1")!,
                middlewares: [Tracer(name: "a", trace: trace), Tracer(name: "b", trace: trace)]
            ),
            transport: transport
        )
        _ = try await session.send(HTTPRequest(method: .get, path: "/items?page=2"))
        #expect(trace.withLock { $0 } == ["→a", "→b", "←b", "←a"])
        let sent = try #require(transport.requests.first)
        #expect(sent.request.headerFields[values: HTTPField.Name("X-Trace")!] == ["a", "b"])
        #expect(sent.request.scheme == "https")
        #expect(sent.request.authority == "api.example.com")
        #expect(sent.request.path == "/v1/items?page=2")
    }

    /// A challenge filter: on 401, fetch a credential and restart the request once.
    struct RetryOnUnauthorized: Middleware {
        let restarts: Locked<Int>

        func intercept(
            _ request: HTTPRequest,
            body: RequestBody?,
            context: MiddlewareContext,
            next: Next
        ) async throws -> Response {
            let response = try await next(request, body, context)
            guard response.status == .unauthorized, body?.isReplayable ?? true else { return response }
            restarts.withLock { $0 += 1 }
            var request = request
            request.headerFields[.authorization] = "Basic dXNlcjpwYXNzd2Q="  // user:passwd
            var context = context
            context.attempt += 1
            return try await next(request, body, context)
        }
    }

    @Test func aResponseFilterRestartsTheRequestAgainstARealServer() async throws {
        let env = try await TestServers.shared()
        let restarts = Locked(0)
        let session = SessionFactory.httpbin(env) { $0.middlewares = [RetryOnUnauthorized(restarts: restarts)] }
        let response = try await session.send(HTTPRequest(method: .get, path: "/basic-auth/user/passwd"))
        #expect(response.status == .ok)
        #expect(restarts.withLock { $0 } == 1)
        let json = try JSONSerialization.jsonObject(with: response.data) as? [String: Any]
        #expect(json?["authenticated"] as? Bool == true)
        await session.shutdown()
    }

    @Test func aRequestFilterCanAnswerWithoutTheTransport() async throws {
        struct Cache: Middleware {
            func intercept(
                _ request: HTTPRequest,
                body: RequestBody?,
                context: MiddlewareContext,
                next: Next
            ) async throws -> Response {
                Response(head: HTTPResponse(status: .ok), body: Response.Body(Data("cached".utf8)))
            }
        }
        let transport = MockTransport(responses: [])
        let session = Session(
            configuration: .init(baseURL: URL(string: "https://example.com")!, middlewares: [Cache()]),
            transport: transport
        )
        let response = try await session.send(HTTPRequest(method: .get, path: "/"))
        #expect(String(decoding: response.data, as: UTF8.self) == "cached")
        #expect(transport.requests.isEmpty)
    }

    @Test func contextCarriesTaskIDAndAttempt() async throws {
        struct Probe: Middleware {
            let seen: Locked<[(NetworkTask.ID, Int)]>
            func intercept(
                _ request: HTTPRequest,
                body: RequestBody?,
                context: MiddlewareContext,
                next: Next
            ) async throws -> Response {
                seen.withLock { $0.append((context.taskID, context.attempt)) }
                return try await next(request, body, context)
            }
        }
        let seen = Locked<[(NetworkTask.ID, Int)]>([])
        let session = Session(
            configuration: .init(baseURL: URL(string: "https://example.com")!, middlewares: [Probe(seen: seen)]),
            transport: MockTransport { _, _ in Response(head: HTTPResponse(status: .ok)) }
        )
        let task = session.task(for: HTTPRequest(method: .get, path: "/"))
        _ = try await task.value
        let entries = seen.withLock { $0 }
        #expect(entries.count == 1)
        #expect(entries.first?.0 == task.id)
        #expect(entries.first?.1 == 1)
    }
}
