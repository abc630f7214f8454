public import HTTPTypes

/// Executes one prepared HTTP request and delivers its response.
///
/// A transport is the innermost layer of a ``Session``: the session resolves the request
/// against its base URL, runs the middleware chain, and hands the request to its transport.
/// ``CurlTransport`` is the default; `CourierTesting` ships a scripted mock for unit tests.
///
/// ### Implement a transport
///
/// A transport receives an absolute request (scheme and authority are always set), an
/// optional body and the per-transfer ``TransferOptions``. It reports progress and honours
/// suspend/resume through the ``TransferControl``, and it stops the transfer when the calling
/// Swift task is cancelled, throwing `CancellationError`.
///
/// ```swift
/// struct EchoTransport: Transport {
///     func execute(
///         _ request: HTTPRequest, body: RequestBody?, options: TransferOptions, control: TransferControl
///     ) async throws -> Response {
///         let data = try await body?.collect(upTo: 1 << 20) ?? Data()
///         return Response(head: HTTPResponse(status: .ok), body: Response.Body(data))
///     }
/// }
/// ```
public protocol Transport: Sendable {
    /// Executes one HTTP request.
    ///
    /// - Parameters:
    ///   - request: The request head. Its scheme and authority are set.
    ///   - body: The request body, if any.
    ///   - options: Timeouts, redirect policy and how to deliver the response body.
    ///   - control: Receives progress and carries suspend/resume requests for this transfer.
    /// - Returns: The response. Its body is buffered or streamed, as `options.responseBody` asks.
    /// - Throws: A ``CourierError`` when the transfer fails, or `CancellationError` when
    ///   the calling task or the ``TransferControl`` cancels it.
    func execute(
        _ request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl
    ) async throws -> Response

    /// The trust every connection of this transport is checked against.
    ///
    /// Sessions and clients on this transport enforce it before anything is sent: with a
    /// secured configuration only HTTPS to trusted hosts, no caller-set `Authorization`, and
    /// credentials attached only where ``SecurityConfiguration`` allows. Unpinned by default.
    ///
    /// This is a promise, and Courier takes it at its word: **a transport that reports a
    /// secured configuration must check every connection it makes against it**, in the TLS
    /// handshake, as ``CurlTransport`` does. A transport that reports one and connects some
    /// other way would carry tokens over connections no policy checked. Only a test double that never
    /// connects may report a configuration it does not enforce.
    var security: SecurityConfiguration { get }

    /// Stops accepting work, fails transfers in flight and releases resources.
    func shutdown() async
}

extension Transport {
    /// Unpinned: a transport that says nothing about trust gets none of the secured checks,
    /// and secured resource access refuses it.
    public var security: SecurityConfiguration { .unpinned }

    /// Does nothing: a transport without resources to release needs no shutdown.
    public func shutdown() async {}
}
