extension NetworkTask {
    /// Something that happened to a ``NetworkTask``, delivered through ``NetworkTask/events``.
    public enum Event: Sendable, Hashable {
        /// The task entered a new state.
        case stateChanged(NetworkTask.State)
        /// More of the request body was sent.
        case uploadProgress(NetworkTask.Progress)
        /// More of the response body was received.
        case downloadProgress(NetworkTask.Progress)
    }
}
