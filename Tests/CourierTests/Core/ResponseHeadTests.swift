import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Response heads a server controls: reason phrases, and heads too large to accept.
@Suite(.serialized, .timeLimit(.minutes(1)))
struct ResponseHeadTests {
    /// A response head with `fields`, a 2-byte body, and `Connection: close`.
    private static func response(status: String = "200 Whatever The Server Says", fields: [String]) -> Data {
        var head = "HTTP/1.1 \(status)\r\n"
        for field in fields { head += field + "\r\n" }
        head += "Content-Length: 2\r\nConnection: close\r\n\r\nok"
        return Data(head.utf8)
    }

    private func send(_ response: Data) async throws -> Response {
        let server = try CannedResponseServer(response: response)
        defer { server.stop() }
        let session = Session(transport: CurlTransport(configuration: .init(proxy: .none)))
        defer { Task { await session.shutdown() } }
        return try await session.send(HTTPRequest(method: .get, path: server.url("/head").absoluteString))
    }

    private func expectTooLarge(_ response: Data) async throws -> CourierError? {
        await #expect(throws: CourierError(.responseHeaderTooLarge)) { _ = try await send(response) }
    }

    @Test func theStandardReasonPhraseReplacesTheServers() async throws {
        let response = try await send(Self.response(fields: ["X-A: 1"]))
        #expect(response.status.code == 200)
        #expect(response.status.reasonPhrase == "OK")
        #expect("\(response.status)" == "200 OK")
        #expect(response.data == Data("ok".utf8))
    }

    @Test func aCodeWithoutAStandardPhraseGetsItsClassName() async throws {
        let response = try await send(Self.response(status: "299 Custom", fields: []))
        #expect("\(response.status)" == "299 Successful")
        #expect(HTTPResponse.Status.standard(code: 404).reasonPhrase == "Not Found")
        #expect(HTTPResponse.Status.standard(code: 599).reasonPhrase == "Server Error")
    }

    @Test func http2ResponsesHaveTheStandardPhrase() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, .https)
        defer { Task { await session.shutdown() } }
        let response = try await session.send(HTTPRequest(method: .get, path: "/bytes/1k"))
        #expect(response.metrics?.httpVersion == .http2)
        #expect("\(response.status)" == "200 OK")
    }

    @Test func aHeadJustUnderTheLimitsIsAccepted() async throws {
        let line = "X-Long: " + String(repeating: "a", count: ResponseHeadLimits.maximumLineBytes - 12)
        let response = try await send(Self.response(fields: [line]))
        #expect(response.headerFields[HTTPField.Name("X-Long")!]?.count == ResponseHeadLimits.maximumLineBytes - 12)
    }

    @Test func trailersAreNotCountedWithTheHead() async throws {
        // An 88 KiB head, a chunked body, and 9 KiB of trailers: each part is under the limit.
        var text = "HTTP/1.1 200 OK\r\n"
        for index in 0..<80 { text += "X-Field-\(index): " + String(repeating: "h", count: 1100) + "\r\n" }
        text += "Transfer-Encoding: chunked\r\nTrailer: X-T0, X-T1, X-T2\r\nConnection: close\r\n\r\n"
        text += "2\r\nok\r\n0\r\n"
        for index in 0..<3 { text += "X-T\(index): " + String(repeating: "t", count: 3000) + "\r\n" }
        text += "\r\n"
        let response = try await send(Data(text.utf8))
        #expect(response.status.code == 200)
        #expect(response.data == Data("ok".utf8))
    }

    @Test func aLineOverCouriersLimitIsRefusedWithItsKind() async throws {
        let line = "X-Long: " + String(repeating: "a", count: 70 << 10)
        let error = try await expectTooLarge(Self.response(fields: [line]))
        #expect(error?.message.contains("header line") == true)
        #expect(error?.curlCode == nil)
    }

    @Test func aLineOverLibcurlsLimitIsRefusedWithTheSameKind() async throws {
        // libcurl never delivers a line over 100 KiB and reports "out of memory": still this kind.
        let line = "X-Long: " + String(repeating: "a", count: 150 << 10)
        let error = try await expectTooLarge(Self.response(fields: [line]))
        #expect(error?.curlCode == 27)
    }

    @Test func aHeadOverTheSectionLimitIsRefusedWithItsKind() async throws {
        let fields = (0..<100).map { "X-Field-\($0): " + String(repeating: "b", count: 1200) }
        let error = try await expectTooLarge(Self.response(fields: fields))
        #expect(error?.message.contains("response head") == true)
    }
}
