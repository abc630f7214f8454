import Courier
import Foundation
import HTTPTypes
import Testing

/// How Courier behaves as an HTTP client towards servers that answer well, oddly or wrongly:
/// framing, status lines, content codings, redirects, cancellation, full-duplex bodies and
/// trailers, each checked the way a caller of ``Session`` would see it.
///
/// One test per case against `Tests/Servers/conformance.py`. The cases about the server's own
/// answers run over HTTP/1.1 and HTTP/2 (the test's argument); the cases about answers that are
/// not valid HTTP only over plain HTTP/1.1, where such bytes can be sent at all.
@Suite("HTTP client conformance", .timeLimit(.minutes(2)))
struct ConformanceTests {
    // MARK: Answers that are not, or not quite, valid HTTP

    /// A server that answers with bytes that have no status line is no HTTP server: the
    /// request fails, and says so.
    @Test func testNotHTTP() async throws {
        try await withConformanceClient(.http1, server: .raw) { client in
            await expectFailure(.malformedResponse) { try await client.session.send(get("/not_http")) }
        }
    }

    /// `Http/1.1` is not the protocol name (it is case-sensitive): the answer is malformed.
    @Test func testBadHTTPCase() async throws {
        try await withConformanceClient(.http1, server: .raw) { client in
            await expectFailure(.malformedResponse) { try await client.session.send(get("/http_case")) }
        }
    }

    /// The reason phrase may be empty, and a status line without one is still a status line.
    @Test func testNoReason() async throws {
        try await withConformanceClient(.http1, server: .raw) { client in
            let response = try await client.send(.get, "/no_reason")
            #expect(response.status == .ok)
        }
    }

    /// A 204 has no body whatever its Content-Length says: the response ends with the head.
    @Test func test204WithContentLength() async throws {
        try await withConformanceClient(.http1, server: .raw) { client in
            let response = try await client.stream(.get, "/204_with_cl")
            #expect(response.status == .noContent)
            #expect(try await response.body.collect(upTo: .max).isEmpty)
        }
    }

    /// A 304 has no body whatever its Content-Length says: the response ends with the head.
    @Test func test304WithContentLength() async throws {
        try await withConformanceClient(.http1, server: .raw) { client in
            let response = try await client.stream(.get, "/304_with_cl")
            #expect(response.status == .notModified)
            #expect(try await response.body.collect(upTo: .max).isEmpty)
        }
    }

    /// A connection that closes before Content-Length bytes arrived did not deliver the body:
    /// the head is there, reading the body fails as a closed connection.
    @Test func testIncompleteBody() async throws {
        try await withConformanceClient(.http1, server: .raw) { client in
            let response = try await client.stream(.get, "/incomplete_body")
            #expect(response.status == .ok)
            await expectFailure(.connectionClosed) { try await response.body.collect(upTo: .max) }
            // Buffered, the same answer fails the request as a whole.
            await expectFailure(.connectionClosed) { try await client.session.send(get("/incomplete_body")) }
        }
    }

    /// Without Content-Length or chunked coding, the body is what arrives until the server
    /// closes the connection.
    @Test func testNoLengthHint() async throws {
        try await withConformanceClient(.http1, server: .raw) { client in
            let response = try await client.send(.get, "/no_length_hint")
            #expect(response.status == .ok)
            #expect(response.data.text == "1234")
        }
    }

    /// `Content-Length: 10, 4` names two lengths: the body's framing cannot be trusted, so the
    /// request must fail rather than hand over a body of either length. libcurl takes the first
    /// number; the 4 bytes that follow then end short of it, and Courier reports the connection
    /// that closed before the body was complete.
    @Test func testConflictingContentLength() async throws {
        try await withConformanceClient(.http1, server: .raw) { client in
            await expectFailure(.malformedResponse) { try await client.session.send(get("/conflicting_cl")) }
        }
    }

    // MARK: Plain requests and responses

    /// Every common method gets its 200 with an empty body and no trailer fields.
    @Test(arguments: ConformanceWire.allCases)
    func testOk(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            for method in [HTTPRequest.Method.head, .get, .put, .post, .delete] {
                let response = try await client.send(method, "/200")
                #expect(response.status == .ok, "\(method)")
                #expect(response.data.isEmpty, "\(method)")
                #expect(response.trailerFields.isEmpty, "\(method)")
            }
        }
    }

    /// A streamed body that ends before its first chunk arrives as an empty body (over HTTP/1.1
    /// a chunked body of only its last chunk).
    @Test(arguments: ConformanceWire.allCases)
    func testEmptyChunkedBody(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let nothing = AsyncStream<Data> { $0.finish() }
            let response = try await client.send(.post, "/request", body: .stream(nothing))
            #expect(response.status == .ok)
            let echoed = try EchoedRequest(response)
            #expect(echoed.body.isEmpty)
            #expect(echoed.method == "POST")
        }
    }

    /// A request body comes back byte for byte.
    @Test(arguments: ConformanceWire.allCases)
    func testEchoString(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(.post, "/echo", body: .string("Hello World"))
            #expect(response.status == .ok)
            #expect(response.data.text == "Hello World")
        }
    }

    /// Courier asks for gzip and hands over the decoded body; the header says how it travelled.
    @Test(arguments: ConformanceWire.allCases)
    func testGzip(_ wire: ConformanceWire) async throws {
        try await expectDecoded("gzip", from: "/gzip", over: wire)
    }

    /// Courier asks for deflate (zlib) and hands over the decoded body.
    @Test(arguments: ConformanceWire.allCases)
    func testDeflate(_ wire: ConformanceWire) async throws {
        try await expectDecoded("deflate", from: "/deflate", over: wire)
    }

    /// Courier asks for brotli and hands over the decoded body.
    @Test(arguments: ConformanceWire.allCases)
    func testBrotli(_ wire: ConformanceWire) async throws {
        try await expectDecoded("br", from: "/brotli", over: wire)
    }

    private func expectDecoded(_ coding: String, from path: String, over wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(.get, path)
            #expect(response.status == .ok)
            // The server encodes only when the request's Accept-Encoding names the coding.
            #expect(response.headerFields[.contentEncoding] == coding)
            #expect(response.data.text == "TEST\n")
        }
    }

    /// A body sent without any coding arrives as it is.
    @Test(arguments: ConformanceWire.allCases)
    func testIdentity(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(.get, "/identity")
            #expect(response.status == .ok)
            let coding = response.headerFields[.contentEncoding]
            #expect(coding == nil || coding == "identity")
            #expect(response.data.text == "TEST\n")
        }
    }

    /// A header field of the caller's reaches the server with its value unchanged.
    @Test(arguments: ConformanceWire.allCases)
    func testCustomHeader(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(
                .post,
                "/request",
                headerFields: [HTTPField.Name("X-Foo")!: "BARbaz"],
                body: .string("Hello World")
            )
            #expect(response.status == .ok)
            let echoed = try EchoedRequest(response)
            #expect(echoed.header("X-Foo") == ["BARbaz"])
            #expect(echoed.body == "Hello World")
        }
    }

    /// 301 and 308 are followed to the target, which sees a plain GET.
    @Test(arguments: ConformanceWire.allCases)
    func testBasicRedirect(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            for path in ["/301", "/308"] {
                let response = try await client.send(.get, path)
                #expect(response.status == .ok, "\(path)")
                let echoed = try EchoedRequest(response)
                #expect(echoed.method == "GET", "\(path)")
                #expect(echoed.body.isEmpty, "\(path)")
            }
        }
    }

    /// A 404 is a response, not an error.
    @Test(arguments: ConformanceWire.allCases)
    func testNotFound(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(.get, "/404")
            #expect(response.status == .notFound)
            #expect(response.data.isEmpty)
        }
    }

    /// 999 is no registered status, but a valid three-digit one: it reaches the caller as it is.
    @Test(arguments: ConformanceWire.allCases)
    func testStatusOutOfRangeButValid(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(.get, "/999")
            #expect(response.statusCode == 999)
            #expect(response.data.isEmpty)
        }
    }

    /// A hundred requests at once on one session all get their whole answer.
    @Test(arguments: ConformanceWire.allCases)
    func testStressTest(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let completed = try await withThrowingTaskGroup(of: Bool.self) { group in
                for _ in 0..<100 {
                    group.addTask {
                        let response = try await client.send(.get, "/request")
                        return response.status == .ok && !response.data.isEmpty
                    }
                }
                var good = 0
                for try await isGood in group where isGood { good += 1 }
                return good
            }
            #expect(completed == 100)
        }
    }

    /// The short way of sending a GET, an absolute URL in a ``ResourceRequest``.
    @Test(arguments: ConformanceWire.allCases)
    func testGetConvenience(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let url = client.baseURL.absoluteString + "/request"
            let response = try await client.session.send(ResourceRequest(path: url))
            client.expectWire(response)
            #expect(response.status == .ok)
            let echoed = try EchoedRequest(response)
            #expect(echoed.method == "GET")
            #expect(echoed.body.isEmpty)
        }
    }

    /// The short way of sending a POST with a body, an absolute URL in a ``ResourceRequest``.
    @Test(arguments: ConformanceWire.allCases)
    func testPostConvenience(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let url = client.baseURL.absoluteString + "/request"
            let request = ResourceRequest(path: url, method: .post, body: .data(Data("Hello World".utf8)))
            let response = try await client.session.send(request)
            client.expectWire(response)
            #expect(response.status == .ok)
            let echoed = try EchoedRequest(response)
            #expect(echoed.method == "POST")
            #expect(echoed.body == "Hello World")
        }
    }

    // MARK: Cancellation

    /// Cancelling the task of a request whose server never answers ends the request at once with
    /// `CancellationError`.
    @Test(arguments: ConformanceWire.allCases)
    func testCancelPreHeaders(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let key = UUID().uuidString
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    _ = try await client.send(.get, "/stall?key=\(key)")
                    Issue.record("a request to a server that never answers completed")
                }
                // Answers once the stalled request has reached the server.
                let arrived = try await client.send(.get, "/arrived?key=\(key)")
                #expect(arrived.status == .ok)
                group.cancelAll()
                let error = await #expect(throws: (any Error).self) { try await group.next() }
                #expect(error is CancellationError, "\(String(describing: error))")
            }
        }
    }

    /// Cancelling the task of a request while it waits for the rest of a body ends the body's
    /// iteration with an error; the part that arrived before may be handed over first.
    @Test(arguments: ConformanceWire.allCases)
    func testCancelPreBody(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let (headArrived, signal) = AsyncStream<Void>.makeStream()
            await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask {
                    defer { signal.finish() }
                    let response = try await client.stream(.get, "/stall_body")
                    #expect(response.status == .ok)
                    signal.yield()
                    for try await chunk in response.body {
                        #expect(!chunk.isEmpty)
                    }
                    Issue.record("a body that never ends ended")
                }
                for await _ in headArrived { break }
                group.cancelAll()
                let error = await #expect(throws: (any Error).self) { try await group.next() }
                #expect(error is CancellationError, "\(String(describing: error))")
            }
        }
    }

    // MARK: Bodies

    /// A 1 MB body sent with its length comes back whole.
    @Test(arguments: ConformanceWire.allCases)
    func testEcho1MBBody(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let payload = Data(repeating: UInt8(ascii: "A"), count: 1_000_000)
            let response = try await client.send(.post, "/echo", body: .data(payload))
            #expect(response.status == .ok)
            #expect(response.data == payload)
        }
    }

    /// Reading only the start of a large body and dropping the rest is fine, and the session
    /// goes on working.
    @Test(arguments: ConformanceWire.allCases)
    func testUnderRead(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            do {
                let response = try await client.stream(.get, "/1mb_body")
                #expect(response.status == .ok)
                var chunks = response.body.makeAsyncIterator()
                let first = try await chunks.next()
                #expect(first?.first == UInt8(ascii: "A"))
            }
            let next = try await client.send(.get, "/200")
            #expect(next.status == .ok)
        }
    }

    /// A large body read byte by byte from its chunks arrives complete and in order.
    @Test(arguments: ConformanceWire.allCases)
    func testDripRead(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.stream(.get, "/1mb_body")
            #expect(response.status == .ok)
            var bytes: [UInt8] = []
            bytes.reserveCapacity(1_000_000)
            for try await chunk in response.body {
                for byte in chunk { bytes.append(byte) }
            }
            #expect(bytes == [UInt8](repeating: UInt8(ascii: "A"), count: 1_000_000))
        }
    }

    // MARK: Header fields

    /// A header field with an empty value is sent, empty, rather than dropped.
    @Test(arguments: ConformanceWire.allCases)
    func testClientSendsEmptyHeaderValue(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(.post, "/request", headerFields: [.xTest: ""])
            #expect(response.status == .ok)
            #expect(try EchoedRequest(response).header("X-Test") == [""])
        }
    }

    /// Redirects that never end stop at the session's limit with `tooManyRedirects`.
    @Test(arguments: ConformanceWire.allCases)
    func testInfiniteRedirect(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            await expectFailure(.tooManyRedirects) { try await client.session.send(get("/redirect_ping")) }
        }
    }

    /// The Content-Length of a HEAD response describes the GET's body: there is no body to read.
    @Test(arguments: ConformanceWire.allCases)
    func testHeadWithContentLength(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(.head, "/head_with_cl")
            #expect(response.status == .ok)
            #expect(response.data.isEmpty)
            #expect(response.trailerFields.isEmpty)
        }
    }

    /// A field the server sends twice reaches the caller with both values.
    @Test(arguments: ConformanceWire.allCases)
    func testServerSendsMultiValueHeader(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let response = try await client.send(.get, "/header_multivalue")
            #expect(response.status == .ok)
            #expect(splitFieldValues(response.headerFields[values: .xTest]) == ["one", "two"])
        }
    }

    /// A field the caller sets twice reaches the server with both values, in order.
    @Test(arguments: ConformanceWire.allCases)
    func testClientSendsMultiValueHeader(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            var fields = HTTPFields()
            fields.append(HTTPField(name: .xTest, value: "one"))
            fields.append(HTTPField(name: .xTest, value: "two"))
            let response = try await client.send(.get, "/request", headerFields: fields)
            let values = try EchoedRequest(response).header("X-Test") ?? []
            #expect(splitFieldValues(values) == ["one", "two"])
        }
    }

    /// Gives the session a cookie jar.
    private static func keepCookies(_ configuration: inout Session.Configuration) {
        configuration.cookieJar = CookieJar()
    }

    /// A cookie the server sets is sent back on the next request to it, by a session with a
    /// cookie jar.
    @Test(arguments: ConformanceWire.allCases)
    func testBasicCookieSetAndUse(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire, configure: Self.keepCookies) { client in
            let first = try await client.send(.get, "/cookie")
            let setCookie = first.headerFields[values: .setCookie]
            #expect(setCookie.count == 1)
            let serverCookie = setCookie.first?.split(separator: ";").first.map(String.init)
            #expect(serverCookie?.hasPrefix("foo=") == true)

            let second = try EchoedRequest(try await client.send(.get, "/request"))
            let cookies = second.header("Cookie") ?? []
            #expect(cookies.count == 1)
            #expect(cookies.first?.split(separator: ";").first.map(String.init) == serverCookie)
        }
    }

    // MARK: Full duplex

    /// Each one-byte chunk of a streamed request body is echoed at once, and the next is sent
    /// only once its echo arrived: the response streams while the request is still being sent,
    /// chunk for chunk.
    @Test(arguments: ConformanceWire.allCases)
    func testEchoInterleave(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let (requestChunks, writer) = AsyncStream<Data>.makeStream()
            let (echoed, odd) = try await withTimeLimit(.seconds(60), "1000 one-byte chunks echoed in turn") {
                defer { writer.finish() }
                writer.yield(Data("A".utf8))
                let response = try await client.stream(.post, "/echo", body: .stream(requestChunks))
                #expect(response.status == .ok)
                var echoed = 0
                var odd = 0
                for try await chunk in response.body {
                    echoed += 1
                    if chunk != Data("A".utf8) { odd += 1 }
                    if echoed < 1000 { writer.yield(Data("A".utf8)) } else { writer.finish() }
                }
                return (echoed, odd)
            }
            #expect(echoed == 1000)
            #expect(odd == 0, "chunks that were not a single \"A\"")
        }
    }

    /// The server speaks first: a one-byte chunk at a time, the next only once the client
    /// echoed it in its request body. The response ends while the request body is still open;
    /// the client sees the end and only then ends its body.
    @Test(arguments: ConformanceWire.allCases)
    func testSpeakInterleave(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            // Courier finds the end of an HTTP/1.1 response in its framing; over HTTP/2 the end
            // of the stream reaches it only when libcurl ends the transfer, which waits for the
            // request body: the last read stalls until the stall timeout.
            try await withKnownIssue("over HTTP/2 a response ends only once the request body has ended too") {
                let (requestChunks, writer) = AsyncStream<Data>.makeStream()
                let (heard, odd) = try await withTimeLimit(.seconds(60), "1000 one-byte chunks answered in turn") {
                    defer { writer.finish() }
                    let response = try await client.stream(.post, "/speak", body: .stream(requestChunks))
                    #expect(response.status == .ok)
                    var heard = 0
                    var odd = 0
                    for try await chunk in response.body {
                        heard += 1
                        if chunk != Data("A".utf8) { odd += 1 }
                        writer.yield(chunk)
                    }
                    // The response has ended; only now does the request body end.
                    writer.finish()
                    return (heard, odd)
                }
                #expect(heard == 1000)
                #expect(odd == 0, "chunks that were not a single \"A\"")
            } when: {
                wire == .http2
            }
        }
    }

    // MARK: Query, caching, trailers

    /// Query parameters arrive as sent: repeated names with each value in order, empty values
    /// kept.
    @Test(arguments: ConformanceWire.allCases)
    func testURLParams(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            var components = URLComponents()
            components.path = "/request"
            components.queryItems = [
                URLQueryItem(name: "foo", value: "bar"),
                URLQueryItem(name: "bar", value: "baz"),
                URLQueryItem(name: "baz", value: "qux"),
                URLQueryItem(name: "qux", value: ""),
                URLQueryItem(name: "foo", value: "phew"),
            ]
            let response = try await client.send(.get, try #require(components.string))
            #expect(
                try EchoedRequest(response).params == [
                    "foo": ["bar", "phew"],
                    "bar": ["baz"],
                    "baz": ["qux"],
                    "qux": [""],
                ]
            )
        }
    }

    /// A response with an ETag is revalidated with If-None-Match; a 304 is answered from the
    /// stored response, with the 304's fields merged in.
    ///
    /// The server's ETag is a counter that moves on only when a request names it in
    /// If-None-Match, so each round is a 200 with body N (`Cached: false`), then the same
    /// answer again from the cache after a 304 (`Cached: true`).
    @Test(arguments: ConformanceWire.allCases)
    func testETag(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) {
            $0.cache = HTTPCache()
        } _: { client in
            let path = "/etag?key=\(UUID().uuidString)"
            for round in 0..<3 {
                for attempt in 0..<2 {
                    let response = try await client.send(.get, path)
                    #expect(response.status == .ok, "round \(round), attempt \(attempt)")
                    #expect(response.headerFields[.eTag] == "\(round)")
                    #expect(response.headerFields[.cached] == (attempt == 0 ? "false" : "true"))
                    #expect(response.data.text == "\(round)")
                    #expect(response.cacheStatus == (attempt == 0 ? .network : .revalidated))
                }
            }
        }
    }

    /// Trailer fields that end a response body reach the caller apart from the header fields,
    /// buffered or, once the body was read to its end, streamed.
    @Test(arguments: ConformanceWire.allCases)
    func testTrailerRead(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let buffered = try await client.send(.get, "/trailers")
            #expect(buffered.status == .ok)
            #expect(buffered.data.text == "Response body")
            expectResponseTrailers(buffered.trailerFields)
            #expect(buffered.headerFields[.xTrailerOne] == nil, "a trailer field was merged into the head")

            let streamed = try await client.stream(.get, "/trailers")
            var body = Data()
            for try await chunk in streamed.body { body.append(chunk) }
            #expect(body.text == "Response body")
            expectResponseTrailers(streamed.trailerFields)
            expectResponseTrailers(streamed.body.trailerFields)
            #expect(streamed.headerFields[.xTrailerOne] == nil, "a trailer field was merged into the head")
        }
    }

    private func expectResponseTrailers(
        _ trailers: HTTPFields,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(trailers[.xTrailerOne] == "first-value", sourceLocation: sourceLocation)
        #expect(trailers[.xTrailerTwo] == "second-value", sourceLocation: sourceLocation)
        #expect(trailers[.xChecksum] == "abc123", sourceLocation: sourceLocation)
    }

    /// Trailer fields given to a streamed request body follow its last chunk.
    ///
    /// They travel in HTTP/1.1's chunked encoding, so Courier sends such a request over HTTP/1.1
    /// also to a server that offers HTTP/2; the HTTP/2 run checks that it does.
    @Test(arguments: ConformanceWire.allCases)
    func testTrailerWrite(_ wire: ConformanceWire) async throws {
        try await withConformanceClient(wire) { client in
            let chunks = AsyncStream<Data> { continuation in
                continuation.yield(Data("Hello World".utf8))
                continuation.finish()
            }
            let body = RequestBody.stream(chunks) {
                [
                    HTTPField.Name("X-Request-Trailer-One")!: "first-trailer-value",
                    HTTPField.Name("X-Request-Trailer-Two")!: "second-trailer-value",
                ]
            }
            let response = try await client.send(.post, "/request", body: body, over: .http1_1)
            #expect(response.status == .ok)
            let echoed = try EchoedRequest(response)
            #expect(echoed.body == "Hello World")
            #expect(echoed.trailer("X-Request-Trailer-One") == ["first-trailer-value"])
            #expect(echoed.trailer("X-Request-Trailer-Two") == ["second-trailer-value"])
        }
    }
}

/// A GET of `path`, relative to the session's base URL.
private func get(_ path: String) -> HTTPRequest {
    HTTPRequest(method: .get, path: path)
}
