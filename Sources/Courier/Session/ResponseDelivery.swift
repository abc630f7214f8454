/// How a request's response body reaches its caller.
enum ResponseDelivery: Sendable {
    /// In memory, whole, before the response returns.
    case buffered
    /// In chunks, with back-pressure, once the head arrived; bounded by the stall timeout.
    case streamed
    /// In chunks, as ``streamed``, for an event stream: its liveness is watched in whole events
    /// (``ServerSentEvents/Configuration/idleTimeout``), so the transfer has no byte stall
    /// timeout.
    case events

    /// Sets `options` to deliver this way, with `bufferBytes` unread bytes before a stream pauses.
    func apply(to options: inout TransferOptions, bufferBytes: Int) {
        switch self {
        case .buffered:
            break
        case .streamed:
            options.responseBody = .streamed(bufferBytes: bufferBytes)
        case .events:
            options.responseBody = .streamed(bufferBytes: bufferBytes)
            options.stallTimeout = nil
        }
    }
}
