import Foundation

/// The stall timeout, kept by Courier rather than by libcurl's low-speed check (loop thread).
///
/// libcurl judges "too slow" by an average over about five seconds, so a body that stops after
/// moving a few kilobytes fails seconds after the stall timeout. Instead the transfer notes
/// when a byte last moved — a response head line or body chunk in, a request body chunk out —
/// and the loop fails it once that is longer ago than the timeout (see
/// ``CurlMultiLoop``'s stall sweep).
///
/// The watch starts with the response head, or earlier with the first request body bytes (an
/// upload the server stops reading stalls too). It rests while the transfer waits on its own
/// side: the consumer of a streamed body is behind, the caller suspended the transfer, or the
/// request body has no bytes yet while no response is moving (before the response head, or
/// after the whole response arrived while the request body goes on); before the head it also
/// rests once the request body was sent whole (then the server is working, and the deadline
/// bounds the wait).
extension CurlTransfer {
    /// Starts watching, or restarts the clock when the transfer moves again after a rest.
    func watchForStalls() {
        guard let stall = options.stallTimeout else { return }
        let now = StallClock.now
        running.lastMoved = now
        running.stallWatched = true
        loop.scheduleStallCheck(at: now &+ stall.nanoseconds)
    }

    /// A byte moved.
    @inline(__always)
    func moved() {
        if running.stallWatched { running.lastMoved = StallClock.now }
    }

    /// When the transfer counts as stalled unless a byte moves first, or `nil` while it rests
    /// or is not watched.
    var stallDue: UInt64? {
        guard running.stallWatched, let stall = options.stallTimeout, machine.isRunningUnpaused(receive: true),
            !control.isSuspended
        else { return nil }
        let waitingForTheBody = !running.uploadEnded && !machine.isRunningUnpaused(receive: false)
        if !machine.hasFinalHead, running.uploadEnded || waitingForTheBody { return nil }
        if machine.responseHasEnded, waitingForTheBody { return nil }
        return running.lastMoved &+ stall.nanoseconds
    }

    /// The error of a transfer that stalled.
    var stalledError: CourierError {
        let seconds = Double((options.stallTimeout ?? .zero).milliseconds) / 1000
        let direction = machine.hasFinalHead ? "the response" : "the request body"
        var error = CourierError(
            kind: .stalled,
            message: "no byte of \(direction) moved for \(seconds) s (the stall timeout)"
        )
        // A response had begun: sending the request again is not the cure (see RetryPolicy).
        error.receivedResponse = running.head.statusCode > 0
        return error
    }
}

/// The coarse monotonic clock of the stall watch: nanoseconds, a few milliseconds apart, read
/// for the price of a memory load.
enum StallClock {
    static var now: UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC_COARSE, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }
}

extension Duration {
    /// The duration in whole nanoseconds, zero when negative, at most about a century (so that
    /// adding it to a clock reading cannot overflow).
    var nanoseconds: UInt64 {
        let (seconds, attoseconds) = components
        guard seconds >= 0 else { return 0 }
        return UInt64(min(seconds, 3_155_760_000)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }
}
