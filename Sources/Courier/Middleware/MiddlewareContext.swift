public import Logging

/// What a ``Middleware`` knows about the request it handles besides the request itself.
///
/// Pass on the context you were given, changed as needed, rather than a new one: it also
/// carries what Courier keeps for the request, such as whose token a request for one of many
/// users needs, and a request whose context lost it fails with
/// ``CourierError/Kind/userNotAuthenticated``.
public struct MiddlewareContext: Sendable {
    /// The id of the ``NetworkTask`` (or plain `send`) this request belongs to.
    public var taskID: NetworkTask.ID { storage.taskID }
    /// The attempt number, starting at 1. A middleware that restarts a request increases it.
    public var attempt: Int {
        get { storage.attempt }
        set { unique().attempt = newValue }
    }
    /// Where middleware logs. It logs nothing unless the caller passed a logger.
    public var logger: Logger {
        get { storage.logger }
        set { unique().logger = newValue }
    }
    /// The transfer options; a middleware may change them for the rest of the pipeline.
    public var options: TransferOptions {
        get { storage.options }
        _modify { yield &unique().options }
    }
    /// The transfer's control: progress and suspend/resume. A request sent without a
    /// ``NetworkTask`` (``Session/send(_:body:deadline:logger:)``, ``Session/stream(_:body:deadline:logger:)``)
    /// has a control that reports nothing and ignores suspend and resume.
    public var control: TransferControl { storage.control }
    /// The retry policy of this request, or `nil` for the session's
    /// ``Session/Configuration/retryPolicy``; a request's ``ResourceRequest/retryPolicy``.
    public var retryPolicy: RetryPolicy? {
        get { storage.retryPolicy }
        set { unique().retryPolicy = newValue }
    }
    /// What the layers above the core attached to the request for their own middleware, such
    /// as whose token it carries; none on a request sent straight to a ``Session``.
    var attributes: RequestAttributes {
        get { storage.attributes }
        _modify { yield &unique().attributes }
    }
    /// The transfers of the request so far, counted while it is traced; `nil` otherwise.
    var transfers: TransferCount? {
        get { storage.transfers }
        set { unique().transfers = newValue }
    }

    /// The values, shared by copies until one of them changes. Every async frame of the
    /// chain that may send the request again keeps its context, and a request in flight keeps
    /// those frames: with a reference, each holds eight bytes of it instead of the whole.
    private var storage: Storage

    /// The storage, first copied when another context shares it.
    private mutating func unique() -> Storage {
        if !isKnownUniquelyReferenced(&storage) { storage = storage.copy() }
        return storage
    }

    /// Changed only through a context that holds the sole reference (``unique()``), so no
    /// two tasks ever see one instance change.
    private final class Storage: @unchecked Sendable {
        let taskID: NetworkTask.ID
        var attempt: Int
        var logger: Logger
        var options: TransferOptions
        let control: TransferControl
        var retryPolicy: RetryPolicy?
        var attributes: RequestAttributes
        var transfers: TransferCount?

        init(
            taskID: NetworkTask.ID,
            attempt: Int,
            logger: Logger,
            options: TransferOptions,
            control: TransferControl,
            retryPolicy: RetryPolicy?,
            attributes: RequestAttributes = RequestAttributes(),
            transfers: TransferCount? = nil
        ) {
            self.taskID = taskID
            self.attempt = attempt
            self.logger = logger
            self.options = options
            self.control = control
            self.retryPolicy = retryPolicy
            self.attributes = attributes
            self.transfers = transfers
        }

        func copy() -> Storage {
            Storage(
                taskID: taskID,
                attempt: attempt,
                logger: logger,
                options: options,
                control: control,
                retryPolicy: retryPolicy,
                attributes: attributes,
                transfers: transfers
            )
        }
    }

    /// Creates a context.
    ///
    /// - Parameters:
    ///   - taskID: The id of the task the request belongs to.
    ///   - attempt: The attempt number, 1 for the first.
    ///   - logger: Where middleware logs.
    ///   - options: The transfer options.
    ///   - control: The transfer's control.
    ///   - retryPolicy: The request's retry policy, or `nil` for the session's.
    public init(
        taskID: NetworkTask.ID,
        attempt: Int = 1,
        logger: Logger,
        options: TransferOptions,
        control: TransferControl,
        retryPolicy: RetryPolicy? = nil
    ) {
        storage = Storage(
            taskID: taskID,
            attempt: attempt,
            logger: logger,
            options: options,
            control: control,
            retryPolicy: retryPolicy
        )
    }

    /// Creates the context a request of a session starts with: its first attempt, carrying the
    /// `attributes` a layer above the core attached to it.
    init(
        taskID: NetworkTask.ID,
        logger: Logger,
        options: TransferOptions,
        control: TransferControl,
        retryPolicy: RetryPolicy?,
        attributes: RequestAttributes
    ) {
        storage = Storage(
            taskID: taskID,
            attempt: 1,
            logger: logger,
            options: options,
            control: control,
            retryPolicy: retryPolicy,
            attributes: attributes
        )
    }

    /// Creates a context with the session's retry policy.
    ///
    /// - Parameters:
    ///   - taskID: The id of the task the request belongs to.
    ///   - attempt: The attempt number, 1 for the first.
    ///   - logger: Where middleware logs.
    ///   - options: The transfer options.
    ///   - control: The transfer's control.
    @_disfavoredOverload
    public init(
        taskID: NetworkTask.ID,
        attempt: Int = 1,
        logger: Logger,
        options: TransferOptions,
        control: TransferControl
    ) {
        self.init(
            taskID: taskID,
            attempt: attempt,
            logger: logger,
            options: options,
            control: control,
            retryPolicy: nil
        )
    }
}
