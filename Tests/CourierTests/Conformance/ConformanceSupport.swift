import Courier
import Foundation
import HTTPTypes
import Testing

/// The protocol a conformance case runs over.
///
/// Both talk to the same routes of `Tests/Servers/conformance.py`: HTTP/1.1 on its plain port,
/// HTTP/2 on its TLS port (ALPN `h2`, the suite's test certificate).
enum ConformanceWire: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case http1 = "HTTP/1.1"
    case http2 = "HTTP/2"

    var testDescription: String { rawValue }

    /// The version a response over this wire reports in its metrics.
    var httpVersion: Response.Metrics.HTTPVersion {
        switch self {
        case .http1: .http1_1
        case .http2: .http2
        }
    }
}

/// Which port of the conformance server a case talks to.
enum ConformanceServer: Sendable {
    /// The regular routes, over the wire the case runs on.
    case routes
    /// The answers that are not, or not quite, valid HTTP (plain HTTP/1.1 only).
    case raw
}

struct ConformanceSetupError: Error, CustomStringConvertible {
    let description: String
}

/// A session on the conformance server, and the wire it is expected to use.
struct ConformanceClient: Sendable {
    let session: Session
    let wire: ConformanceWire
    /// The server's origin, for cases that send absolute URLs.
    let baseURL: URL

    /// Sends a request and returns the buffered response, after checking that it came over the
    /// expected protocol: the wire's, or `version` where Courier picks another on purpose.
    func send(
        _ method: HTTPRequest.Method,
        _ path: String,
        headerFields: HTTPFields = [:],
        body: RequestBody? = nil,
        over version: Response.Metrics.HTTPVersion? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Response {
        let request = HTTPRequest(method: method, path: path, headerFields: headerFields)
        let response = try await session.send(request, body: body)
        expectWire(response, version: version, sourceLocation: sourceLocation)
        return response
    }

    /// Sends a request and returns as soon as the response head is there; the body streams.
    func stream(
        _ method: HTTPRequest.Method,
        _ path: String,
        headerFields: HTTPFields = [:],
        body: RequestBody? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> Response {
        let request = HTTPRequest(method: method, path: path, headerFields: headerFields)
        let response = try await session.stream(request, body: body)
        expectWire(response, sourceLocation: sourceLocation)
        return response
    }

    /// Every case checks the protocol, so that an HTTP/2 run that fell back to HTTP/1.1 cannot
    /// pass for an HTTP/2 result.
    func expectWire(
        _ response: Response,
        version: Response.Metrics.HTTPVersion? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(response.metrics?.httpVersion == version ?? wire.httpVersion, sourceLocation: sourceLocation)
    }
}

/// Runs `body` with a session on the conformance server and shuts the session down afterwards,
/// also when `body` throws.
///
/// Every session sends each request once (``RetryPolicy/never``): a case observes what one
/// exchange with the server does, and a retry would hide it. The timeouts keep a case that
/// waits for something that never comes from hanging the suite: 20 s until a response head,
/// 10 s without a byte moving once it is there.
func withConformanceClient<T>(
    _ wire: ConformanceWire,
    server: ConformanceServer = .routes,
    configure: (inout Session.Configuration) -> Void = { _ in },
    _ body: (ConformanceClient) async throws -> T
) async throws -> T {
    let env = try await TestServers.shared()
    let baseURL: URL
    switch (server, wire) {
    case (.raw, .http1): baseURL = env.conformanceRaw
    case (.raw, .http2): throw ConformanceSetupError(description: "the raw answers are plain HTTP/1.1 only")
    case (.routes, .http1): baseURL = env.conformance
    case (.routes, .http2): baseURL = env.conformanceTLS
    }
    var configuration = Session.Configuration(baseURL: baseURL)
    configuration.retryPolicy = .never
    configuration.timeout = .seconds(20)
    configuration.stallTimeout = .seconds(10)
    configure(&configuration)
    var transport = CurlTransport.Configuration(proxy: .none)
    transport.trustedCertificateBundlePath = env.caBundle
    transport.allowsHTTP2 = wire == .http2
    let session = Session(configuration: configuration, transport: CurlTransport(configuration: transport))
    let client = ConformanceClient(session: session, wire: wire, baseURL: baseURL)
    do {
        let result = try await body(client)
        await session.shutdown()
        await session.transport.shutdown()
        return result
    } catch {
        await session.shutdown()
        await session.transport.shutdown()
        throw error
    }
}

/// What the server's `/request` route saw of a request, as it answers it in JSON.
struct EchoedRequest: Decodable, Sendable {
    let method: String
    /// The query parameters, each name with its values in order.
    let params: [String: [String]]
    /// The header fields by name as the client spelled it.
    let headers: [String: [String]]
    /// The body as UTF-8 text.
    let body: String
    /// The trailer fields that ended a chunked body, by name as the client spelled it.
    let trailers: [String: [String]]

    init(_ response: Response) throws {
        self = try JSONDecoder().decode(EchoedRequest.self, from: response.data)
    }

    /// The values of the header field `name`, which matches without regard to case (as field
    /// names do; over HTTP/2 they arrive lower-cased); `nil` when the field is absent.
    func header(_ name: String) -> [String]? {
        Self.values(of: name, in: headers)
    }

    /// The values of the trailer field `name`, matched as in ``header(_:)``.
    func trailer(_ name: String) -> [String]? {
        Self.values(of: name, in: trailers)
    }

    private static func values(of name: String, in fields: [String: [String]]) -> [String]? {
        let matching = fields.filter { $0.key.lowercased() == name.lowercased() }
        return matching.isEmpty ? nil : matching.flatMap(\.value)
    }
}

/// The values of a field, each split at its commas: a field sent as two lines and one sent as
/// one comma-separated line mean the same.
func splitFieldValues(_ values: [String]) -> [String] {
    values.flatMap { $0.split(separator: ",", omittingEmptySubsequences: false) }
        .map { $0.trimmingCharacters(in: .whitespaces) }
}

struct ConformanceTimeout: Error, CustomStringConvertible {
    let what: String
    let limit: Duration
    var description: String { "\(what) did not finish within \(limit)" }
}

/// Runs `operation`, and fails with ``ConformanceTimeout`` when it takes longer than `limit`
/// (cancelling it): the full-duplex cases wait on each other's steps, and one that never comes
/// must fail the case, not hang the suite.
func withTimeLimit<T: Sendable>(
    _ limit: Duration,
    _ what: String,
    _ operation: @escaping @Sendable () async throws -> T
) async throws -> T {
    try await withThrowingTaskGroup(of: T.self) { group in
        group.addTask(operation: operation)
        group.addTask {
            try await Task.sleep(for: limit)
            throw ConformanceTimeout(what: what, limit: limit)
        }
        defer { group.cancelAll() }
        guard let result = try await group.next() else { throw CancellationError() }
        return result
    }
}

/// Expects `operation` to throw a ``CourierError`` of `kind`; when it returns instead, the
/// issue says what the caller would have been handed (for a response: its status and fields).
func expectFailure<T>(
    _ kind: CourierError.Kind,
    sourceLocation: SourceLocation = #_sourceLocation,
    _ operation: () async throws -> T
) async {
    do {
        let result = try await operation()
        let handed =
            if let response = result as? Response {
                "a response with status \(response.statusCode) and fields \(response.headerFields)"
            } else {
                "\(result)"
            }
        Issue.record("expected a CourierError of kind \(kind), got \(handed)", sourceLocation: sourceLocation)
    } catch let error as CourierError {
        #expect(error.kind == kind, "\(error)", sourceLocation: sourceLocation)
    } catch {
        Issue.record(error, "expected a CourierError of kind \(kind)", sourceLocation: sourceLocation)
    }
}

extension Data {
    /// The bytes as UTF-8 text.
    var text: String { String(decoding: self, as: UTF8.self) }
}

extension HTTPField.Name {
    static let xTest = HTTPField.Name("X-Test")!
    static let cached = HTTPField.Name("Cached")!
    static let xTrailerOne = HTTPField.Name("X-Trailer-One")!
    static let xTrailerTwo = HTTPField.Name("X-Trailer-Two")!
    static let xChecksum = HTTPField.Name("X-Checksum")!
}
