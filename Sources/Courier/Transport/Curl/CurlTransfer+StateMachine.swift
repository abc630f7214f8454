extension CurlTransfer {
    /// The life of one transfer, as a plain value: no curl, no sockets, no allocation.
    ///
    /// The transfer feeds it what happens — the loop starts, queues, cancels or ends it;
    /// libcurl's callbacks deliver the head, body chunks and pauses — and does what each event
    /// returns. An event that cannot happen in the state the transfer is in (a body chunk
    /// before any head, a completion after a cancellation, a second completion, a pause
    /// after the end) returns a defined answer that does nothing harmful, never a trap.
    ///
    /// Who hears of the result follows from the state: the awaiting caller until a streamed
    /// response's head was handed over, the body stream from then on, nobody once the
    /// transfer ended.
    struct StateMachine: Sendable {
        /// How the response body reaches the caller.
        enum Delivery: Sendable {
            /// Collected, then returned with the head.
            case buffered
            /// The head returns first; body chunks follow through a stream.
            case streamed
        }

        /// Where the transfer is.
        enum State: Sendable, Equatable {
            /// Made, not yet taken by the loop; `cancelled` when a cancellation came first.
            case created(cancelled: Bool)
            /// Waiting at its origin for a slot, without an easy handle.
            case queued
            /// Attached to libcurl.
            case running(Running)
            /// Answered, failed or cancelled: nothing more happens.
            case ended
        }

        /// What a running transfer has received.
        struct Running: Sendable, Equatable {
            /// How far the response head is.
            var head: Head = .awaiting
            /// Whether the write callback paused receiving (the stream is full).
            var isReceivePaused = false
            /// Whether the read callback paused sending (the request body has nothing yet).
            var isSendPaused = false
        }

        /// How far a running transfer's response head is.
        enum Head: Sendable, Equatable {
            /// No final head yet (none, or interim 1xx ones only).
            case awaiting
            /// A final head arrived; the caller still waits for the buffered body.
            case received
            /// A final head arrived and went to the caller; the body goes to the stream.
            case streaming
            /// The whole response arrived and went to the caller (its stream ended) while the
            /// request body was still being sent: the upload goes on, nobody waits any more.
            case complete
        }

        /// Whom to tell that the transfer ended.
        enum Recipient: Sendable, Equatable {
            /// The caller awaiting the response.
            case caller
            /// The body stream the caller reads.
            case stream
            /// Nobody: the transfer had already ended.
            case nobody
        }

        /// What to do with a transfer handed to the loop.
        enum StartAction: Sendable, Equatable {
            /// Give it an easy handle and add it to libcurl.
            case attach
            /// Queue it at its origin.
            case enqueue
            /// It was cancelled before it started: fail the caller with `CancellationError`.
            case failCancelled
            /// It was started before: nothing.
            case ignore
        }

        /// What to do on a cancellation.
        enum CancelAction: Sendable, Equatable {
            /// Not started yet: the start fails it.
            case deferToStart
            /// Waiting for a slot: take it out of the queue and fail it.
            case leaveQueue(Recipient)
            /// Running: remove the handle and fail it.
            case abandon(Recipient)
            /// Already ended: nothing.
            case ignore
        }

        /// What to do when a head finished (the blank line after its fields).
        enum HeadAction: Sendable, Equatable {
            /// An interim (1xx) head: wait for the next.
            case interim
            /// The final head: watch for stalls.
            case final
            /// The final head of a streamed response: watch for stalls and hand the head and a
            /// body stream to the caller.
            case finalStreamed
            /// The transfer is not running: abort.
            case abort
        }

        /// What to do with a chunk of the response body.
        enum BodyAction: Sendable, Equatable {
            /// Append it to the buffer.
            case buffer
            /// Offer it to the stream.
            case stream
            /// Take and drop it (bytes before a streamed response's head).
            case discard
            /// The transfer is not running: abort.
            case abort
        }

        /// What to do when the response ended before the transfer (the request body still goes).
        enum ResponseEndAction: Sendable, Equatable {
            /// Return the buffered response to the caller.
            case respond
            /// Finish the body stream.
            case finishStream
            /// The response had ended, or the transfer is not running: nothing.
            case ignore
        }

        /// What to do when libcurl finished the transfer.
        enum CompletionAction: Sendable, Equatable {
            /// Return the buffered response to the caller.
            case respond
            /// Finish the body stream.
            case finishStream
            /// Map libcurl's code to an error and tell the recipient.
            case fail(Recipient)
            /// The transfer had ended already: nothing.
            case ignore
        }

        /// How the response body reaches the caller.
        let delivery: Delivery
        /// Where the transfer is.
        private(set) var state: State = .created(cancelled: false)

        /// Creates the machine of a transfer that was not handed to the loop yet.
        init(delivery: Delivery) {
            self.delivery = delivery
        }

        /// Whether the transfer waits at its origin for a slot.
        var isQueued: Bool { state == .queued }

        /// Whether the transfer ended.
        var hasEnded: Bool { state == .ended }

        /// Whether the caller still awaits the response (no streamed head went out, no end).
        var callerIsWaiting: Bool {
            switch state {
            case .created, .queued: true
            case .running(let running): running.head == .awaiting || running.head == .received
            case .ended: false
            }
        }

        /// Whether the whole response arrived while the request body still goes.
        var responseHasEnded: Bool {
            guard case .running(let running) = state else { return false }
            return running.head == .complete
        }

        /// Whether the transfer runs and the receiving (`receive`) or sending side is not paused
        /// by a callback.
        func isRunningUnpaused(receive: Bool) -> Bool {
            guard case .running(let running) = state else { return false }
            return receive ? !running.isReceivePaused : !running.isSendPaused
        }

        /// Whether the final response head arrived.
        var hasFinalHead: Bool {
            guard case .running(let running) = state else { return false }
            return running.head != .awaiting
        }

        // MARK: The loop

        /// The loop takes the transfer; `hasSlot` when its origin has a slot free.
        mutating func start(hasSlot: Bool) -> StartAction {
            switch state {
            case .created(cancelled: true):
                state = .ended
                return .failCancelled
            case .created(cancelled: false):
                state = hasSlot ? .running(Running()) : .queued
                return hasSlot ? .attach : .enqueue
            case .queued, .running, .ended:
                return .ignore
            }
        }

        /// A slot freed up at the origin: `true` when the transfer was waiting for it and now
        /// runs, `false` when it left the queue meanwhile (its entry is skipped).
        mutating func slotGranted() -> Bool {
            guard state == .queued else { return false }
            state = .running(Running())
            return true
        }

        /// The transfer is cancelled (by its task or its ``TransferControl``).
        mutating func cancel() -> CancelAction {
            switch state {
            case .created:
                state = .created(cancelled: true)
                return .deferToStart
            case .queued:
                state = .ended
                return .leaveQueue(.caller)
            case .running:
                let recipient = endedRecipient()
                return .abandon(recipient)
            case .ended:
                return .ignore
            }
        }

        /// The transfer fails for a reason of the loop's (no handle, shutdown, a deadline
        /// passed in the queue, libcurl's multi interface failed). Returns whom to tell.
        mutating func fail() -> Recipient {
            endedRecipient()
        }

        /// The transfer goes again on a fresh connection after its connection died before any
        /// response: `true` when it may (it runs, and no streamed head went out).
        mutating func restart() -> Bool {
            guard case .running(let running) = state, running.head == .awaiting || running.head == .received else {
                return false
            }
            state = .running(Running())
            return true
        }

        // MARK: libcurl's callbacks

        /// A status line arrived: a new head begins (after an interim one, or after a final one
        /// when libcurl sent the request again by itself, as after a 417 to an expectation).
        mutating func statusLineReceived() {
            guard case .running(var running) = state, running.head == .received else { return }
            running.head = .awaiting
            state = .running(running)
        }

        /// A head ended with `status` (the blank line after its fields).
        mutating func headReceived(status: Int) -> HeadAction {
            guard case .running(var running) = state else { return .abort }
            guard status >= 200 else { return .interim }  // 1xx, or no status line yet
            switch running.head {
            case .awaiting:
                running.head = delivery == .streamed ? .streaming : .received
                state = .running(running)
                return delivery == .streamed ? .finalStreamed : .final
            case .received, .streaming, .complete:
                return .final  // the head went out already
            }
        }

        /// A chunk of the response body arrived.
        func bodyReceived() -> BodyAction {
            guard case .running(let running) = state else { return .abort }
            switch (running.head, delivery) {
            case (.streaming, _): return .stream
            case (.complete, _): return .discard
            case (_, .buffered): return .buffer
            case (_, .streamed): return .discard
            }
        }

        /// The write callback paused receiving: the stream is full.
        mutating func receivePaused() {
            guard case .running(var running) = state else { return }
            running.isReceivePaused = true
            state = .running(running)
        }

        /// The read callback paused sending: the request body has no bytes yet.
        mutating func sendPaused() {
            guard case .running(var running) = state else { return }
            running.isSendPaused = true
            state = .running(running)
        }

        /// The pause should match the caller's wish again (a suspension or resumption, a
        /// drained stream, new request body bytes): `true` when the transfer runs and the
        /// easy handle's pause must be set. Pauses of the callbacks are lifted with it; if
        /// their cause persists, the next callback pauses again.
        mutating func updatePause() -> Bool {
            guard case .running(var running) = state else { return false }
            running.isReceivePaused = false
            running.isSendPaused = false
            state = .running(running)
            return true
        }

        /// The whole response arrived while the request body is still being sent: the caller
        /// gets its response (or the end of its stream) now, and the upload goes on.
        mutating func responseEnded() -> ResponseEndAction {
            guard case .running(var running) = state else { return .ignore }
            let action: ResponseEndAction
            switch running.head {
            case .awaiting, .complete: return .ignore
            case .received: action = .respond
            case .streaming: action = .finishStream
            }
            running.head = .complete
            state = .running(running)
            return action
        }

        /// libcurl finished the transfer, successfully or not.
        mutating func completed(successfully: Bool) -> CompletionAction {
            guard case .running(let running) = state else { return .ignore }
            state = .ended
            if running.head == .complete { return .ignore }  // the caller had its response
            guard successfully else { return .fail(running.head == .streaming ? .stream : .caller) }
            return running.head == .streaming ? .finishStream : .respond
        }

        /// Ends the transfer and says whom to tell.
        private mutating func endedRecipient() -> Recipient {
            let recipient: Recipient =
                switch state {
                case .created, .queued: .caller
                case .running(let running):
                    switch running.head {
                    case .awaiting, .received: .caller
                    case .streaming: .stream
                    case .complete: .nobody
                    }
                case .ended: .nobody
                }
            state = .ended
            return recipient
        }
    }
}
