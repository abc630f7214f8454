import Synchronization

/// The link between one observable transfer and its transport: progress flows out,
/// suspend and resume flow in.
///
/// A ``Session`` creates one control per ``NetworkTask``; it lives across the attempts of
/// that task. A ``Transport`` calls ``attach(_:)`` when a transfer starts, reports progress
/// with ``reportUpload(_:)`` and ``reportDownload(_:)``, and calls ``detach()`` when it ends.
public final class TransferControl: Sendable {
    /// Observes progress. Called on the transport's thread; keep it short.
    public typealias ProgressHandler =
        @Sendable (_ upload: NetworkTask.Progress?, _ download: NetworkTask.Progress?) -> Void

    private struct State {
        var isSuspended = false
        var pauseHandler: (@Sendable (Bool) -> Void)?
    }

    private let state = LockedBox(State())
    private let progressHandler: ProgressHandler?
    /// Whether this is ``none``: it ignores suspend and resume, and a transport has nothing
    /// to attach to it.
    let isInert: Bool

    /// Creates a control.
    ///
    /// - Parameter progressHandler: Receives upload and download progress.
    public init(progressHandler: ProgressHandler? = nil) {
        self.progressHandler = progressHandler
        isInert = false
    }

    private init(inert: Void) {
        progressHandler = nil
        isInert = true
    }

    /// The control of plain `send` calls, shared by all of them: it observes nothing and
    /// ignores suspend and resume (one transfer's suspension must not stop every later one).
    /// Transports skip attaching to it, which saves each such transfer a pause handler.
    static let none = TransferControl(inert: ())

    /// Whether anyone observes progress.
    public var observesProgress: Bool { progressHandler != nil }

    /// Whether the transfer is suspended.
    public var isSuspended: Bool { state.withLock { $0.isSuspended } }

    /// Suspends the transfer: no bytes move until ``resume()``.
    public func suspend() { setSuspended(true) }

    /// Resumes a suspended transfer.
    public func resume() { setSuspended(false) }

    private func setSuspended(_ suspended: Bool) {
        guard !isInert else { return }
        let handler = state.withLock { state -> (@Sendable (Bool) -> Void)? in
            guard state.isSuspended != suspended else { return nil }
            state.isSuspended = suspended
            return state.pauseHandler
        }
        handler?(suspended)
    }

    /// Connects a running transfer. The transport pauses and resumes it through `pauseHandler`.
    ///
    /// - Returns: Whether the transfer must start suspended.
    public func attach(_ pauseHandler: @escaping @Sendable (_ suspended: Bool) -> Void) -> Bool {
        guard !isInert else { return false }
        return state.withLock { state in
            state.pauseHandler = pauseHandler
            return state.isSuspended
        }
    }

    /// Disconnects the transfer that ended.
    public func detach() {
        guard !isInert else { return }
        state.withLock { $0.pauseHandler = nil }
    }

    /// Reports upload progress.
    public func reportUpload(_ progress: NetworkTask.Progress) { progressHandler?(progress, nil) }

    /// Reports download progress.
    public func reportDownload(_ progress: NetworkTask.Progress) { progressHandler?(nil, progress) }
}
