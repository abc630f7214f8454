import CourierTesting
import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// A request sent again is prepared once (``PreparedRequestMemo``): what reaches the transport
/// and the server is what preparing it anew would give, to the spelling and order of each field.
@Suite(.timeLimit(.minutes(1)))
struct PreparedRequestTests {
    private static let trace = HTTPField.Name("X-Trace")!
    private static let lowerTrace = HTTPField.Name("x-trace")!

    private func session(
        configure: (inout Session.Configuration) -> Void = { _ in }
    ) -> (Session, MockTransport) {
        let transport = MockTransport { _, _ in Response(head: HTTPResponse(status: .noContent)) }
        var configuration = Session.Configuration(baseURL: URL(string: "https://api.example.com/base/"))
        configure(&configuration)
        return (Session(configuration: configuration, transport: transport), transport)
    }

    @Test func aRepeatedRequestIsPreparedAsTheFirst() async throws {
        let (session, transport) = session { $0.defaultHeaderFields = [.acceptLanguage: "en"] }
        let request = HTTPRequest(method: .get, path: "/items", headerFields: [Self.trace: "a"])
        _ = try await session.send(request)
        _ = try await session.send(HTTPRequest(method: .get, path: "/items", headerFields: [Self.trace: "a"]))
        let sent = transport.requests.map(\.request)
        #expect(sent.count == 2)
        #expect(sent.allSatisfy { $0.path == "/base/items" && $0.authority == "api.example.com" })
        #expect(sent.allSatisfy { $0.headerFields[.acceptLanguage] == "en" && $0.headerFields[.userAgent] != nil })
        #expect(
            sent.map { Array($0.headerFields.map(\.name.rawName)) }
                == Array(repeating: ["X-Trace", "Accept-Language", "User-Agent"], count: 2)
        )
    }

    @Test func aRequestThatDiffersInSpellingOrderOrValueIsPreparedItself() async throws {
        let (session, transport) = session()
        let variants: [HTTPFields] = [
            [Self.trace: "a", .accept: "text/plain"],
            [Self.lowerTrace: "a", .accept: "text/plain"],
            [.accept: "text/plain", Self.lowerTrace: "a"],
            [.accept: "text/plain", Self.lowerTrace: "b"],
        ]
        for fields in variants {
            _ = try await session.send(HTTPRequest(method: .get, path: "/items", headerFields: fields))
        }
        _ = try await session.send(HTTPRequest(method: .post, path: "/items", headerFields: variants[3]))
        _ = try await session.send(HTTPRequest(method: .post, path: "/other", headerFields: variants[3]))
        let sent = transport.requests.map(\.request)
        #expect(
            sent.map { $0.headerFields.map { "\($0.name.rawName)=\($0.value)" }.dropLast() } == [
                ["X-Trace=a", "Accept=text/plain"],
                ["x-trace=a", "Accept=text/plain"],
                ["Accept=text/plain", "x-trace=a"],
                ["Accept=text/plain", "x-trace=b"],
                ["Accept=text/plain", "x-trace=b"],
                ["Accept=text/plain", "x-trace=b"],
            ]
        )
        #expect(sent.map(\.method) == [.get, .get, .get, .get, .post, .post])
        #expect(
            sent.map(\.path) == [
                "/base/items", "/base/items", "/base/items", "/base/items", "/base/items", "/base/other",
            ]
        )
    }

    @Test func aReconfiguredSessionPreparesTheSameRequestAnew() async throws {
        let (session, transport) = session()
        _ = try await session.send(HTTPRequest(method: .get, path: "/a"))
        await session.reconfigure { $0.defaultHeaderFields[.acceptLanguage] = "de" }
        _ = try await session.send(HTTPRequest(method: .get, path: "/a"))
        await session.reconfigure { $0.baseURL = URL(string: "https://other.example.com/") }
        _ = try await session.send(HTTPRequest(method: .get, path: "/a"))
        let sent = transport.requests.map(\.request)
        #expect(sent.map { $0.headerFields[.acceptLanguage] } == [nil, "de", "de"])
        #expect(sent.map(\.authority) == ["api.example.com", "api.example.com", "other.example.com"])
    }

    @Test func aRequestThatFailsPreparationFailsEveryTime() async throws {
        let (session, transport) = session()
        let refused = HTTPRequest(method: .get, scheme: "ftp", authority: "api.example.com", path: "/a")
        _ = try await session.send(HTTPRequest(method: .get, path: "/a"))
        for _ in 0..<2 {
            await #expect(throws: CourierError(.invalidURL)) { try await session.send(refused) }
        }
        #expect(transport.requests.count == 1)
    }

    @Test func aRequestThatCarriesACredentialIsNeverRemembered() {
        let memo = PreparedRequestMemo()
        let plain = HTTPRequest(method: .get, path: "/a")
        memo.remember(plain, for: plain)
        #expect(memo.prepared(for: plain) == plain)
        for name in [HTTPField.Name.authorization, .proxyAuthorization, .cookie] {
            var carrying = plain
            carrying.headerFields[name] = "secret"
            memo.remember(carrying, for: carrying)
            #expect(memo.prepared(for: carrying) == nil)
            #expect(memo.prepared(for: plain) == plain)
        }
    }

    @Test func sameMeansTheSameBytes() {
        let request = HTTPRequest(method: .get, path: "/a", headerFields: [Self.trace: "a", .accept: "*/*"])
        #expect(PreparedRequestMemo.isSame(request, request))
        #expect(
            PreparedRequestMemo.isSame(
                request,
                HTTPRequest(method: .get, path: "/a", headerFields: [Self.trace: "a", .accept: "*/*"])
            )
        )
        let others = [
            HTTPRequest(method: .head, path: "/a", headerFields: [Self.trace: "a", .accept: "*/*"]),
            HTTPRequest(method: .get, path: "/b", headerFields: [Self.trace: "a", .accept: "*/*"]),
            HTTPRequest(
                method: .get,
                scheme: "https",
                authority: "x",
                path: "/a",
                headerFields: [Self.trace: "a", .accept: "*/*"]
            ),
            HTTPRequest(method: .get, path: "/a", headerFields: [Self.lowerTrace: "a", .accept: "*/*"]),
            HTTPRequest(method: .get, path: "/a", headerFields: [.accept: "*/*", Self.trace: "a"]),
            HTTPRequest(method: .get, path: "/a", headerFields: [Self.trace: "a"]),
            HTTPRequest(method: .get, path: "/a", headerFields: [Self.trace: "a", .accept: "*/*", .accept: "*/*"]),
            HTTPRequest(method: .get, path: "/a", headerFields: [Self.trace: "A", .accept: "*/*"]),
        ]
        var neverIndexed = HTTPField(name: Self.trace, value: "a")
        neverIndexed.indexingStrategy = .avoid
        let requests =
            others + [
                HTTPRequest(
                    method: .get,
                    path: "/a",
                    headerFields: HTTPFields([neverIndexed, HTTPField(name: .accept, value: "*/*")])
                )
            ]
        for other in requests {
            #expect(!PreparedRequestMemo.isSame(request, other))
            #expect(!PreparedRequestMemo.isSame(other, request))
        }
    }

    /// Over the wire (the conformance server echoes each field as the client spelled it): the
    /// same request, then one that differs only in the spelling of a name, then many at once.
    @Test func theServerSeesEachRequestAsItWasWritten() async throws {
        try await withConformanceClient(.http1) { client in
            let first = try EchoedRequest(try await client.send(.get, "/request", headerFields: [Self.trace: "a"]))
            let again = try EchoedRequest(try await client.send(.get, "/request", headerFields: [Self.trace: "a"]))
            let respelled = try EchoedRequest(
                try await client.send(.get, "/request", headerFields: [Self.lowerTrace: "a"])
            )
            for echoed in [first, again] {
                #expect(echoed.headers["X-Trace"] == ["a"])
                #expect(echoed.headers["x-trace"] == nil)
                #expect(echoed.header("User-Agent")?.first?.hasPrefix("Courier/") == true)
            }
            #expect(respelled.headers["x-trace"] == ["a"])
            #expect(respelled.headers["X-Trace"] == nil)
            let echoes = try await withThrowingTaskGroup(of: EchoedRequest.self) { group in
                for index in 0..<40 {
                    group.addTask {
                        let value = index % 2 == 0 ? "even" : "odd"
                        return try EchoedRequest(
                            try await client.send(.get, "/request", headerFields: [Self.trace: value])
                        )
                    }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(echoes.filter { $0.headers["X-Trace"] == ["even"] }.count == 20)
            #expect(echoes.filter { $0.headers["X-Trace"] == ["odd"] }.count == 20)
        }
    }
}
