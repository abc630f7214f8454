import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Content-encoded responses are decoded transparently (libcurl's decoders, enabled
/// with `CURLOPT_ACCEPT_ENCODING ""`). The servers send the same ~300 KiB JSON payload
/// zstd-compressed (a pre-compressed file with `Content-Encoding: zstd`) and gzipped
/// on the fly by nginx; `files.zstd` / `files.gzip` carry the decoded size and SHA-256.
@Suite(.timeLimit(.minutes(2)))
struct DecodingTests {
    @Test(arguments: [NginxServer.http, .https])
    func zstdBodyIsDecoded(server: NginxServer) async throws {
        let env = try await TestServers.shared()
        let file = env.file("zstd")
        #expect(file.contentEncoding == "zstd")
        let encodedSize = try #require(file.encodedSize)
        let session = SessionFactory.session(env, server)
        let marker = UUID().uuidString

        let response = try await session.send(HTTPRequest(method: .get, path: "\(file.urlPath)?m=\(marker)"))
        #expect(response.status == .ok)
        #expect(response.data.count == file.size)
        #expect(response.data.sha256Hex == file.sha256)

        // What crossed the wire was the encoded body.
        let entries = try await Self.accessLog(env, server) { $0.uri.hasSuffix("?m=\(marker)") }
        #expect(entries.count == 1)
        #expect(entries.first?.bodyBytesSent == encodedSize)
        #expect(encodedSize < file.size)
        await session.shutdown()
    }

    @Test(arguments: [NginxServer.http, .https])
    func gzipBodyIsDecoded(server: NginxServer) async throws {
        let env = try await TestServers.shared()
        let file = env.file("gzip")
        #expect(file.contentEncoding == "gzip")
        let session = SessionFactory.session(env, server)
        let marker = UUID().uuidString

        let response = try await session.send(HTTPRequest(method: .get, path: "\(file.urlPath)?m=\(marker)"))
        #expect(response.status == .ok)
        #expect(response.data.count == file.size)
        #expect(response.data.sha256Hex == file.sha256)

        // nginx compressed it: far fewer bytes on the wire than the payload.
        let entries = try await Self.accessLog(env, server) { $0.uri.hasSuffix("?m=\(marker)") }
        #expect(entries.count == 1)
        #expect(entries.first.map { $0.bodyBytesSent > 0 && $0.bodyBytesSent < file.size / 2 } == true)
        await session.shutdown()
    }

    @Test func identityPayloadMatchesTheDecodedBodies() async throws {
        let env = try await TestServers.shared()
        let payload = env.file("payload")
        #expect(payload.sha256 == env.file("zstd").sha256)
        #expect(payload.sha256 == env.file("gzip").sha256)
        let session = SessionFactory.session(env, .http)
        let response = try await session.send(HTTPRequest(method: .get, path: payload.urlPath))
        #expect(response.data.sha256Hex == payload.sha256)
        await session.shutdown()
    }

    @Test func requestsAdvertiseTheDecoders() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .http)
        let response = try await session.send(HTTPRequest(method: .get, path: "/echo"))
        let json = try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: Any])
        let headers = try #require(json["headers"] as? [String: String])
        let accepted = Set(
            (headers["accept-encoding"] ?? "").split(separator: ",").map {
                $0.trimmingCharacters(in: .whitespaces)
            }
        )
        #expect(accepted.isSuperset(of: ["gzip", "zstd"]), "Accept-Encoding: \(headers["accept-encoding"] ?? "none")")
        await session.shutdown()
    }

    // MARK: - Helpers

    /// The matching access-log entries, waiting briefly for nginx to write the line.
    private static func accessLog(
        _ env: TestEnvironment,
        _ server: NginxServer,
        where matches: (AccessLogEntry) -> Bool
    ) async throws -> [AccessLogEntry] {
        let deadline = ContinuousClock.now + .seconds(3)
        while true {
            let entries = try env.accessLog(server).filter(matches)
            if !entries.isEmpty || ContinuousClock.now > deadline { return entries }
            try await Task.sleep(for: .milliseconds(20))
        }
    }
}
