import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// HTTP/2 behaviour against nginx: connections that end with GOAWAY (the `goaway`
/// block sends it after five requests per connection) and streams that break off.
@Suite(.timeLimit(.minutes(2)))
struct HTTP2Tests {
    @Test func sequentialRequestsSurviveGoaway() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .goaway)
        let marker = UUID().uuidString
        let file = env.file("1k")

        var reused = 0
        for index in 0..<30 {
            let response = try await session.send(
                HTTPRequest(method: .get, path: "\(file.urlPath)?seq=\(marker)-\(index)")
            )
            #expect(response.status == .ok, "request \(index)")
            #expect(response.data.sha256Hex == file.sha256, "request \(index)")
            #expect(response.metrics?.httpVersion == .http2, "request \(index)")
            if response.metrics?.isConnectionReused == true { reused += 1 }
        }
        // Five requests per connection: at least six connections, each reused four times.
        #expect(reused <= 24)
        #expect(reused >= 20)

        let entries = try await Self.accessLog(env, .goaway, expecting: 30) { $0.uri.contains("seq=\(marker)-") }
        #expect(entries.count == 30)
        #expect(entries.allSatisfy { $0.status == 200 && $0.httpProtocol == "HTTP/2.0" && $0.connectionRequests <= 5 })
        #expect(Set(entries.map(\.connection)).count >= 6)
        await session.shutdown()
    }

    @Test func concurrentRequestsSurviveGoaway() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .goaway)
        let marker = UUID().uuidString
        let small = env.file("1k")
        let large = env.file("1m")

        // Warm up so the concurrent burst multiplexes over a connection that will hit its limit.
        _ = try await session.send(HTTPRequest(method: .get, path: small.urlPath))
        typealias Result = (index: Int, status: Int, sha256: String, version: Response.Metrics.HTTPVersion?)
        let results = try await withThrowingTaskGroup(of: Result.self) { group in
            for index in 0..<30 {
                let file = index % 3 == 0 ? large : small
                group.addTask {
                    let response = try await session.send(
                        HTTPRequest(method: .get, path: "\(file.urlPath)?conc=\(marker)-\(index)")
                    )
                    return (index, response.status.code, response.data.sha256Hex, response.metrics?.httpVersion)
                }
            }
            return try await group.reduce(into: [Int: Result]()) { $0[$1.index] = $1 }
        }
        #expect(results.count == 30)
        for index in 0..<30 {
            let file = index % 3 == 0 ? large : small
            #expect(results[index]?.status == 200, "request \(index)")
            #expect(results[index]?.sha256 == file.sha256, "request \(index)")
            #expect(results[index]?.version == .http2, "request \(index)")
        }

        let entries = try await Self.accessLog(env, .goaway, expecting: 30) { $0.uri.contains("conc=\(marker)-") }
        #expect(entries.filter { $0.status == 200 }.count == 30)
        #expect(entries.allSatisfy { $0.connectionRequests <= 5 })
        #expect(Set(entries.map(\.connection)).count >= 6)

        // The session is still usable afterwards.
        let after = try await session.send(HTTPRequest(method: .get, path: small.urlPath))
        #expect(after.data.sha256Hex == small.sha256)
        await session.shutdown()
    }

    /// 100 rounds of 30 concurrent GETs on one session against a server that ends every
    /// connection with GOAWAY after five streams: streams the server refused or never
    /// processed go again, and no request fails, however often a handle meets a GOAWAY.
    @Test func goawayUnderLoadFailsNoRequest() async throws {
        let env = try await TestServers.shared()
        // Retries off: the transport absorbs this by itself.
        let session = SessionFactory.session(env, .goaway) { $0.retryPolicy = .never }
        let file = env.file("1k")
        var failures: [String] = []
        for _ in 0..<100 {
            let errors = await withTaskGroup(of: String?.self) { group in
                for _ in 0..<30 {
                    group.addTask {
                        do {
                            let response = try await session.send(HTTPRequest(method: .get, path: file.urlPath))
                            return response.status == .ok && response.data.count == file.size
                                ? nil : "status \(response.status.code), \(response.data.count) bytes"
                        } catch {
                            return "\(error)"
                        }
                    }
                }
                return await group.reduce(into: [String]()) { if let error = $1 { $0.append(error) } }
            }
            failures += errors
        }
        let failed = failures.count
        #expect(failed == 0, "\(failed) of 3,000 failed, first: \(failures.first ?? "")")
        await session.shutdown()
    }

    @Test func truncatedStreamIsConnectionClosed() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        let warmup = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        #expect(warmup.metrics?.httpVersion == .http2)

        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/truncated"))
        }
        #expect(error?.kind == .connectionClosed)
        #expect(error?.curlCode == 92)  // CURLE_HTTP2_STREAM: nginx resets the stream

        // Only the stream was reset: the connection and the session carry on.
        let after = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        #expect(after.data.sha256Hex == env.file("1k").sha256)
        await session.shutdown()
    }

    // MARK: - Helpers

    /// The access-log entries that match, once `count` of them are there (nginx writes
    /// the line as it finishes the request, which can be just after the client has it).
    private static func accessLog(
        _ env: TestEnvironment,
        _ server: NginxServer,
        expecting count: Int,
        where matches: (AccessLogEntry) -> Bool
    ) async throws -> [AccessLogEntry] {
        let deadline = ContinuousClock.now + .seconds(3)
        while true {
            let entries = try env.accessLog(server).filter(matches)
            if entries.count >= count || ContinuousClock.now > deadline { return entries }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
