/// Something that happened to a ``NetworkTask``, delivered through ``NetworkTask/events``.
public enum TaskEvent: Sendable, Hashable {
    /// The task entered a new state.
    case stateChanged(TaskState)
    /// More of the request body was sent.
    case uploadProgress(TransferProgress)
    /// More of the response body was received.
    case downloadProgress(TransferProgress)
}
