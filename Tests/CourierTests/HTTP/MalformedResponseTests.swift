import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// Answers that are not HTTP, against the fault server's `/raw` route: the request reached a
/// server, so the error says the response was malformed (not the URL, not a redirect), and no
/// caller ever gets a status the server did not send, or a body whose length is in doubt.
@Suite(.timeLimit(.minutes(1)))
struct MalformedResponseTests {
    private func send(_ answer: String) async throws -> Response {
        let env = try await TestServers.shared()
        let session = Session(
            configuration: .init(baseURL: env.faults),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        defer { Task { await session.shutdown() } }
        return try await session.send(HTTPRequest(method: .get, path: "/raw?answer=\(answer)"))
    }

    @Test(arguments: ["not-http", "bad-case", "status-1000", "status-99", "status-0", "no-status", "two-lengths"])
    func anAnswerWithoutAValidStatusLineIsAMalformedResponse(answer: String) async throws {
        let error = await #expect(throws: CourierError.self) { try await send(answer) }
        #expect(error?.kind == .malformedResponse, "\(answer): \(String(describing: error))")
        #expect(error?.message.contains("HELLO") == false)
    }

    @Test(arguments: ["not-http", "bad-case"])
    func anAnswerThatIsNotHTTPOverTLSIsAMalformedResponseToo(answer: String) async throws {
        let env = try await TestServers.shared()
        var transport = CurlTransport.Configuration(proxy: .none)
        transport.trustedCertificateBundlePath = env.caBundle
        let session = Session(
            configuration: .init(baseURL: env.faultsTLS),
            transport: CurlTransport(configuration: transport)
        )
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/raw?answer=\(answer)"))
        }
        #expect(error?.kind == .malformedResponse, "\(answer): \(String(describing: error))")
        await session.shutdown()
    }

    @Test func aStatusLineWithoutAReasonPhraseIsValid() async throws {
        let response = try await send("no-reason")
        #expect(response.statusCode == 200)
        #expect(String(decoding: response.data, as: UTF8.self) == "ok")
    }

    @Test(arguments: [("unknown", "Unrecognized content encoding"), ("corrupt", "unencoding")])
    func aBodyCourierCannotDecodeIsUndecodableContent(kind: String, text: String) async throws {
        let env = try await TestServers.shared()
        let session = Session(
            configuration: .init(baseURL: env.faults),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
        let error = await #expect(throws: CourierError.self) {
            try await session.send(HTTPRequest(method: .get, path: "/encoding?kind=\(kind)"))
        }
        #expect(error?.kind == .undecodableContent, "\(String(describing: error))")
        #expect(error?.curlDetail?.contains(text) == true, "\(String(describing: error?.curlDetail))")
        #expect(error.map { RetryPolicy.isRetryable($0) } == false)
        await session.shutdown()
    }
}
