public import Courier
public import Foundation
public import HTTPTypes
import Synchronization

/// A ``/Courier/Transport`` for unit tests: it records every request and answers from a script.
///
/// A mock never opens a connection, so it may report any ``/Courier/Transport/security``: give it the
/// secured configuration your production transport has, and a ``/Courier/Session`` or a
/// `ResourceAccess` on it runs every security check — HTTPS only, trusted hosts only,
/// credentials only where they may go — without a network.
///
/// ```swift
/// let transport = MockTransport { request, body in
///     Response(head: HTTPResponse(status: .ok), body: Response.Body(Data("hello".utf8)))
/// }
/// let session = Session(configuration: .init(baseURL: URL(string: "https://example.com")!), transport: transport)
/// _ = try await session.send(HTTPRequest(method: .get, path: "/greeting"))
/// #expect(transport.requests.map(\.request.path) == ["/greeting"])
/// ```
public final class MockTransport: Transport {
    /// A request as the transport received it.
    public struct RecordedRequest: Sendable {
        /// The request head.
        public var request: HTTPRequest
        /// The request body, collected.
        public var body: Data?
        /// The options the transfer was given.
        public var options: TransferOptions
    }

    /// Produces the response for one request.
    public typealias Responder = @Sendable (HTTPRequest, Data?) async throws -> Response

    private struct State {
        var requests: [RecordedRequest] = []
        var scripted: [Result<Response, any Error>] = []
    }

    private let state = LockedBox(State())
    private let responder: Responder?

    /// The security the mock reports; sessions and clients on it enforce it.
    public let security: SecurityConfiguration

    /// Creates a mock that answers every request with `responder`.
    ///
    /// - Parameters:
    ///   - security: The security to report (unpinned by default).
    ///   - responder: Produces each response.
    public init(security: SecurityConfiguration = .unpinned, responder: @escaping Responder) {
        self.security = security
        self.responder = responder
    }

    /// Creates a mock that replays `responses` in order, one per request.
    ///
    /// - Parameters:
    ///   - security: The security to report (unpinned by default).
    ///   - responses: The responses or errors, in order.
    public init(security: SecurityConfiguration = .unpinned, responses: [Result<Response, any Error>]) {
        self.security = security
        self.responder = nil
        state.withLock { $0.scripted = responses }
    }

    /// The requests received so far, in order.
    public var requests: [RecordedRequest] { state.withLock { $0.requests } }

    /// Records the request and answers it from the script.
    ///
    /// - Throws: The scripted error, or ``/Courier/CourierError`` when the script has run out.
    public func execute(
        _ request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl
    ) async throws -> Response {
        try Task.checkCancellation()
        let data = try await body?.collect(upTo: 64 << 20)
        let next = state.withLock { state -> Result<Response, any Error>? in
            state.requests.append(RecordedRequest(request: request, body: data, options: options))
            return state.scripted.isEmpty ? nil : state.scripted.removeFirst()
        }
        if let responder { return try await responder(request, data) }
        guard let next else {
            throw CourierError(.transportFailure, message: "MockTransport has no scripted response left")
        }
        return try next.get()
    }
}
