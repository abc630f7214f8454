extension NetworkTask {
    /// Where a ``NetworkTask`` is in its life.
    public enum State: Sendable, Hashable {
        /// The request is being sent or the response received.
        case running
        /// The transfer is paused; no bytes move until ``NetworkTask/resume()``.
        case suspended
        /// The task was cancelled; ``NetworkTask/error`` is a `CancellationError`.
        case cancelled
        /// The task ended with a response (any status) or with an error; see
        /// ``NetworkTask/response`` and ``NetworkTask/error``.
        case completed

        /// Whether the task has ended.
        public var isFinal: Bool { self == .cancelled || self == .completed }
    }
}
