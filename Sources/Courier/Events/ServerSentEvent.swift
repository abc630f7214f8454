/// One event of a `text/event-stream` response: what a server sent between two blank lines.
///
/// ```swift
/// for try await event in session.events(ResourceRequest(path: "/feed")) where event.type == "price" {
///     print(event.id ?? "-", event.data)
/// }
/// ```
public struct ServerSentEvent: Sendable, Hashable {
    /// The event's type: the block's `event` field, or `"message"` when it had none.
    public var type: String
    /// The block's `data` lines, joined with a line feed (`"\n"`) between them.
    public var data: String
    /// The stream's last event ID when this event arrived: the `id` of this block or of an
    /// earlier one (IDs carry over), or `nil` when the stream never set one or reset it with an
    /// empty `id`. Courier sends it back as `Last-Event-ID` when it reconnects.
    public var id: String?
    /// The reconnection delay the server asked for in this block's `retry` field, if it had
    /// one. Courier uses it for every later reconnection of the stream.
    public var retry: Duration?

    /// Creates an event.
    ///
    /// - Parameters:
    ///   - type: The event type; `"message"` by default.
    ///   - data: The data.
    ///   - id: The last event ID, or `nil`.
    ///   - retry: The reconnection delay the block asked for, or `nil`.
    public init(type: String = "message", data: String, id: String? = nil, retry: Duration? = nil) {
        self.type = type
        self.data = data
        self.id = id
        self.retry = retry
    }
}
