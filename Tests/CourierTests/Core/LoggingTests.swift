import Foundation
import HTTPTypes
import Logging
import Testing

@testable import Courier

/// The logging middleware against a real server: one line each way, secrets redacted.
@Suite(.timeLimit(.minutes(1)))
struct LoggingTests {
    @Test func logsRequestAndResponseWithSecretsRedacted() async throws {
        let env = try await TestServers.shared()
        let handler = CapturingLogHandler()
        let session = SessionFactory.httpbin(env) { $0.middlewares = [LoggingMiddleware(logger: handler.makeLogger())] }
        var request = HTTPRequest(
            method: .get,
            path: "/response-headers?Set-Cookie=s3cr3t-cookie&access_token=s3cr3t-token"
        )
        request.headerFields[.authorization] = "Bearer s3cr3t-bearer"
        request.headerFields[.cookie] = "id=s3cr3t-id"
        request.headerFields[.proxyAuthorization] = "Basic s3cr3t-proxy"
        _ = try await session.send(request)
        let lines = handler.captured
        #expect(lines.contains { $0.hasPrefix("info → GET http://") })
        #expect(lines.contains { $0.hasPrefix("info ← GET") && $0.contains(" ms, ") })
        #expect(lines.contains { $0.lowercased().contains("authorization: <redacted>") })
        #expect(lines.contains { $0.lowercased().contains("proxy-authorization: <redacted>") })
        #expect(lines.contains { $0.lowercased().contains("cookie: <redacted>") })
        #expect(lines.contains { $0.contains("access_token=<redacted>") })
        #expect(
            lines.contains { $0.hasPrefix("debug ← headers") && $0.lowercased().contains("set-cookie: <redacted>") }
        )
        for line in lines {
            #expect(!line.contains("s3cr3t"), "secret leaked in: \(line)")
        }
        await session.shutdown()
    }

    @Test func aStreamedResponseIsLoggedAsStreamedNotAsZeroBytes() async throws {
        let env = try await TestServers.shared()
        let handler = CapturingLogHandler()
        let session = SessionFactory.session(env, .http) {
            $0.middlewares = [LoggingMiddleware(logger: handler.makeLogger())]
        }
        let response = try await session.stream(HTTPRequest(method: .get, path: "/bytes/1m"))
        let body = try await response.body.collect(upTo: 2 << 20)
        #expect(body.count == 1 << 20)
        let line = handler.captured.first { $0.hasPrefix("info ← GET") }
        #expect(line?.contains("body streamed") == true)
        #expect(line?.contains("0 bytes") == false)
        await session.shutdown()
    }

    @Test func logsFailures() async throws {
        let port = try freePort()
        let handler = CapturingLogHandler()
        let session = Session(
            configuration: .init(
                baseURL: URL(string: "http://127.0.0.1:\(port)")!,
                middlewares: [LoggingMiddleware(logger: handler.makeLogger())]
            ),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        _ = try? await session.send(HTTPRequest(method: .get, path: "/"))
        #expect(handler.captured.contains { $0.hasPrefix("info ✕ GET") && $0.contains("couldNotConnect") })
        await session.shutdown()
    }
}
