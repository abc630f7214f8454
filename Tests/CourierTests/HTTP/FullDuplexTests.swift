import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// A response ends when the response ends, whatever the request body is doing. The fault
/// server's `/speak` sends one-byte chunks, each after the client echoed the previous one in
/// its request body, then its last chunk while the request body is still open; the client ends
/// its upload only after it has read the whole response.
@Suite(.timeLimit(.minutes(1)))
struct FullDuplexTests {
    private func session(_ env: TestEnvironment) -> Session {
        Session(
            configuration: .init(baseURL: env.faults, timeout: .seconds(30), stallTimeout: .seconds(10)),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
    }

    private func stats(_ session: Session, key: String) async throws -> [String: Any] {
        let stats = try await session.send(HTTPRequest(method: .get, path: "/admin/stats?key=\(key)"))
        return (try JSONSerialization.jsonObject(with: stats.data) as? [String: Any])?["key"] as? [String: Any] ?? [:]
    }

    /// Polls the server until it saw the request body end, within a bounded number of tries.
    private func expectRequestEnded(_ session: Session, key: String, echoed: Int) async throws {
        for _ in 0..<100 {
            let entry = try await stats(session, key: key)
            if entry["request_ended"] as? Bool == true {
                #expect(entry["echoed"] as? Int == echoed)
                return
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        Issue.record("the server never saw the request body end")
    }

    @Test func aStreamedResponseEndsBeforeTheRequestBodyDoes() async throws {
        let env = try await TestServers.shared()
        let session = session(env)
        let (upload, writer) = AsyncStream<Data>.makeStream()
        let key = "speak-\(UUID().uuidString)"
        let response = try await session.stream(
            HTTPRequest(method: .post, path: "/speak?rounds=1000&key=\(key)"),
            body: .stream(upload)
        )
        #expect(response.statusCode == 200)
        var chunks = 0
        for try await chunk in response.body {
            for byte in chunk {
                #expect(byte == UInt8(ascii: "A"))
                chunks += 1
                writer.yield(Data("A".utf8))  // echo it: the server sends the next one then
            }
        }
        #expect(chunks == 1000)
        writer.finish()  // only now, after the whole response was read
        try await expectRequestEnded(session, key: key, echoed: 1000)
        await session.shutdown()
    }

    private static func pattern(_ count: Int) -> Data {
        Data(String(repeating: "0123456789abcdef", count: count / 16 + 1).utf8.prefix(count))
    }

    /// A response with a length ends at its last byte, all of it, whatever the receive buffer:
    /// libcurl hands one large read over in several calls (the origin's buffer grows to 128 KiB
    /// after large bodies).
    @Test(arguments: [300 << 10, 5])
    func aResponseWithALengthEndsWhileTheRequestBodyIsOpen(bytes: Int) async throws {
        let env = try await TestServers.shared()
        let session = session(env)
        // Large bodies first: the origin's receive buffer grows.
        let warm = try await session.send(
            HTTPRequest(method: .post, path: "/answer-first?bytes=\(1 << 20)"),
            body: .string("done")
        )
        #expect(warm.data == Self.pattern(1 << 20))
        let (upload, writer) = AsyncStream<Data>.makeStream()
        writer.yield(Data("open".utf8))
        let key = "answer-first-\(UUID().uuidString)"
        let response = try await session.send(
            HTTPRequest(method: .post, path: "/answer-first?bytes=\(bytes)&key=\(key)"),
            body: .stream(upload)
        )
        #expect(response.data.count == bytes)
        #expect(response.data == Self.pattern(bytes))
        writer.finish()
        try await expectRequestEnded(session, key: key, echoed: 4)
        await session.shutdown()
    }

    /// A content-coded response's length is not its decoded length: it ends with the transfer,
    /// whole, once the request body has ended.
    @Test func aContentCodedResponseEndsWithTheTransferWhole() async throws {
        let env = try await TestServers.shared()
        let session = session(env)
        let (upload, writer) = AsyncStream<Data>.makeStream()
        writer.yield(Data("open".utf8))
        let bytes = 200 << 10
        let response = try await session.stream(
            HTTPRequest(method: .post, path: "/answer-first?bytes=\(bytes)&gzip=1"),
            body: .stream(upload)
        )
        var body = Data()
        for try await chunk in response.body {
            body.append(chunk)
            if body.count == bytes { writer.finish() }  // everything is here: end the upload
        }
        #expect(body == Self.pattern(bytes))
        await session.shutdown()
    }

    @Test func aBufferedResponseReturnsWhileTheRequestBodyIsStillOpen() async throws {
        let env = try await TestServers.shared()
        let session = session(env)
        let (upload, writer) = AsyncStream<Data>.makeStream()
        let key = "speak-\(UUID().uuidString)"
        writer.yield(Data("early".utf8))
        let response = try await session.send(
            HTTPRequest(method: .post, path: "/speak?rounds=0&key=\(key)"),
            body: .stream(upload)
        )
        #expect(response.statusCode == 200)
        #expect(response.data.isEmpty)
        writer.yield(Data("late".utf8))
        writer.finish()
        try await expectRequestEnded(session, key: key, echoed: 9)
        await session.shutdown()
    }
}
