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
///         return Response(head: HTTPResponse(status: .ok), body: ResponseBody(data))
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
    /// - Throws: A ``TransportError`` when the transfer fails, or `CancellationError` when
    ///   the calling task or the ``TransferControl`` cancels it.
    func execute(
        _ request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl
    ) async throws -> Response

    /// Stops accepting work, fails transfers in flight and releases resources.
    func shutdown() async
}

extension Transport {
    /// Does nothing: a transport without resources to release needs no shutdown.
    public func shutdown() async {}
}
