import Courier
import HTTPTypes

/// A transport for parsers that are given their bytes directly: it is never asked to send.
public struct UnusedTransport: Transport {
    /// Creates the transport.
    public init() {}

    /// Fails: nothing in a fuzz target sends.
    public func execute(
        _ request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl
    ) async throws -> Response {
        throw CourierError(.shutDown)
    }
}
