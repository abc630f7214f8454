public import Logging

/// What a ``Middleware`` knows about the request it handles besides the request itself.
public struct MiddlewareContext: Sendable {
    /// The id of the ``NetworkTask`` (or plain `send`) this request belongs to.
    public let taskID: NetworkTask.ID
    /// The attempt number, starting at 1. A middleware that restarts a request increases it.
    public var attempt: Int
    /// Where middleware logs. It logs nothing unless the caller passed a logger.
    public var logger: Logger
    /// The transfer options; a middleware may change them for the rest of the pipeline.
    public var options: TransferOptions
    /// The transfer's control: progress and suspend/resume.
    public let control: TransferControl

    /// Creates a context.
    public init(
        taskID: NetworkTask.ID,
        attempt: Int = 1,
        logger: Logger,
        options: TransferOptions,
        control: TransferControl
    ) {
        self.taskID = taskID
        self.attempt = attempt
        self.logger = logger
        self.options = options
        self.control = control
    }
}
