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

    /// Creates a control.
    ///
    /// - Parameter progressHandler: Receives upload and download progress.
    public init(progressHandler: ProgressHandler? = nil) {
        self.progressHandler = progressHandler
    }

    /// A control that observes nothing, shared by plain `send` calls.
    static let none = TransferControl()

    /// Whether anyone observes progress.
    public var observesProgress: Bool { progressHandler != nil }

    /// Whether the transfer is suspended.
    public var isSuspended: Bool { state.withLock { $0.isSuspended } }

    /// Suspends the transfer: no bytes move until ``resume()``.
    public func suspend() { setSuspended(true) }

    /// Resumes a suspended transfer.
    public func resume() { setSuspended(false) }

    private func setSuspended(_ suspended: Bool) {
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
        state.withLock { state in
            state.pauseHandler = pauseHandler
            return state.isSuspended
        }
    }

    /// Disconnects the transfer that ended.
    public func detach() {
        state.withLock { $0.pauseHandler = nil }
    }

    /// Reports upload progress.
    public func reportUpload(_ progress: NetworkTask.Progress) { progressHandler?(progress, nil) }

    /// Reports download progress.
    public func reportDownload(_ progress: NetworkTask.Progress) { progressHandler?(nil, progress) }
}
