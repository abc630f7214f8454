import Testing

@testable import Courier

/// `CurlTransfer.StateMachine` driven without sockets: every legal sequence of a transfer's
/// life, and the illegal ones, which answer with a defined no-op instead of trapping.
@Suite struct TransferStateMachineTests {
    typealias Machine = CurlTransfer.StateMachine

    /// A machine that runs with a slot.
    private func running(_ delivery: Machine.Delivery = .buffered) -> Machine {
        var machine = Machine(delivery: delivery)
        #expect(machine.start(hasSlot: true) == .attach)
        return machine
    }

    // MARK: Legal sequences

    @Test func aBufferedTransferAnswersTheCallerOnce() {
        var machine = running()
        #expect(machine.callerIsWaiting)
        machine.statusLineReceived()
        #expect(machine.headReceived(status: 200) == .final)
        #expect(machine.hasFinalHead)
        #expect(machine.bodyReceived() == .buffer)
        #expect(machine.completed(successfully: true) == .respond)
        #expect(machine.hasEnded)
        #expect(!machine.callerIsWaiting)
    }

    @Test func aStreamedTransferHandsTheHeadOverThenStreams() {
        var machine = running(.streamed)
        #expect(machine.headReceived(status: 200) == .finalStreamed)
        #expect(!machine.callerIsWaiting)
        #expect(machine.bodyReceived() == .stream)
        machine.receivePaused()
        #expect(machine.state == .running(.init(head: .streaming, isReceivePaused: true)))
        #expect(machine.updatePause())
        #expect(machine.state == .running(.init(head: .streaming)))
        #expect(machine.completed(successfully: true) == .finishStream)
    }

    @Test func interimHeadsWaitForTheFinalOne() {
        var machine = running(.streamed)
        machine.statusLineReceived()
        #expect(machine.headReceived(status: 100) == .interim)
        #expect(!machine.hasFinalHead)
        machine.statusLineReceived()
        #expect(machine.headReceived(status: 204) == .finalStreamed)
    }

    @Test func trailersDoNotHandTheHeadOverAgain() {
        var streamed = running(.streamed)
        #expect(streamed.headReceived(status: 200) == .finalStreamed)
        #expect(streamed.headReceived(status: 200) == .final)
        var buffered = running()
        #expect(buffered.headReceived(status: 200) == .final)
        #expect(buffered.headReceived(status: 200) == .final)
        #expect(buffered.completed(successfully: true) == .respond)
    }

    @Test func aFailureGoesToTheCallerBeforeAStreamedHeadAndToTheStreamAfter() {
        var beforeHead = running(.streamed)
        #expect(beforeHead.completed(successfully: false) == .fail(.caller))
        var afterHead = running(.streamed)
        _ = afterHead.headReceived(status: 200)
        #expect(afterHead.completed(successfully: false) == .fail(.stream))
        var buffered = running()
        _ = buffered.headReceived(status: 500)
        #expect(buffered.completed(successfully: false) == .fail(.caller))
    }

    @Test func aQueuedTransferRunsOnceASlotIsFree() {
        var machine = Machine(delivery: .buffered)
        #expect(machine.start(hasSlot: false) == .enqueue)
        #expect(machine.isQueued)
        #expect(machine.callerIsWaiting)
        #expect(machine.slotGranted())
        #expect(!machine.isQueued)
        #expect(machine.state == .running(.init()))
    }

    @Test func aTransferGoesAgainOnAFreshConnectionWithAClearSlate() {
        var machine = running()
        machine.sendPaused()
        #expect(machine.restart())
        #expect(machine.state == .running(.init()))
        #expect(machine.headReceived(status: 200) == .final)
    }

    @Test func aSuspensionAppliesOnlyWhileRunning() {
        var machine = Machine(delivery: .buffered)
        #expect(!machine.updatePause())
        #expect(machine.start(hasSlot: true) == .attach)
        #expect(machine.updatePause())
        // Resuming what is not paused still sets the handle's pause (libcurl: a no-op).
        #expect(machine.updatePause())
    }

    // MARK: Cancellation

    @Test func cancellingBeforeTheStartFailsTheStart() {
        var machine = Machine(delivery: .buffered)
        #expect(machine.cancel() == .deferToStart)
        #expect(machine.cancel() == .deferToStart)
        #expect(machine.start(hasSlot: true) == .failCancelled)
        #expect(machine.hasEnded)
        #expect(machine.start(hasSlot: true) == .ignore)
    }

    @Test func cancellingAQueuedTransferTakesItOutOfTheQueue() {
        var machine = Machine(delivery: .buffered)
        _ = machine.start(hasSlot: false)
        #expect(machine.cancel() == .leaveQueue(.caller))
        #expect(!machine.isQueued)
        #expect(!machine.slotGranted())
    }

    @Test func cancellingDuringTheHeadAbandonsAndIgnoresWhatFollows() {
        var machine = running(.streamed)
        machine.statusLineReceived()
        #expect(machine.cancel() == .abandon(.caller))
        #expect(machine.headReceived(status: 200) == .abort)
        #expect(machine.bodyReceived() == .abort)
        #expect(machine.completed(successfully: true) == .ignore)
        #expect(machine.completed(successfully: false) == .ignore)
        #expect(machine.cancel() == .ignore)
        #expect(machine.fail() == .nobody)
    }

    @Test func cancellingAStreamingTransferFailsTheStream() {
        var machine = running(.streamed)
        _ = machine.headReceived(status: 200)
        #expect(machine.cancel() == .abandon(.stream))
    }

    // MARK: Illegal sequences

    @Test func aBodyBeforeTheHead() {
        var buffered = running()
        #expect(buffered.bodyReceived() == .buffer)  // libcurl's bytes are kept
        var streamed = running(.streamed)
        #expect(streamed.bodyReceived() == .discard)  // there is no stream yet
        var unstarted = Machine(delivery: .buffered)
        #expect(unstarted.bodyReceived() == .abort)
        #expect(unstarted.headReceived(status: 200) == .abort)
        _ = unstarted.start(hasSlot: false)
        #expect(unstarted.bodyReceived() == .abort)
    }

    @Test func completingTwice() {
        var machine = running()
        #expect(machine.completed(successfully: true) == .respond)
        #expect(machine.completed(successfully: true) == .ignore)
        #expect(machine.completed(successfully: false) == .ignore)
        #expect(machine.fail() == .nobody)
    }

    @Test func pausingOrResumingAfterTheEnd() {
        var machine = running(.streamed)
        _ = machine.headReceived(status: 200)
        _ = machine.completed(successfully: true)
        machine.receivePaused()
        machine.sendPaused()
        #expect(!machine.updatePause())
        #expect(machine.state == .ended)
    }

    @Test func completingWhatNeverRan() {
        var created = Machine(delivery: .buffered)
        #expect(created.completed(successfully: true) == .ignore)
        #expect(created.callerIsWaiting)
        var queued = Machine(delivery: .buffered)
        _ = queued.start(hasSlot: false)
        #expect(queued.completed(successfully: false) == .ignore)
        #expect(queued.isQueued)
    }

    @Test func startingOrGrantingASlotTwice() {
        var machine = running()
        #expect(machine.start(hasSlot: true) == .ignore)
        #expect(!machine.slotGranted())
        #expect(machine.state == .running(.init()))
    }

    @Test func restartingAfterAStreamedHeadOrTheEnd() {
        var streamed = running(.streamed)
        _ = streamed.headReceived(status: 200)
        #expect(!streamed.restart())
        var ended = running()
        _ = ended.completed(successfully: false)
        #expect(!ended.restart())
        var queued = Machine(delivery: .buffered)
        _ = queued.start(hasSlot: false)
        #expect(!queued.restart())
    }

    @Test func failingTellsWhoeverWaits() {
        var created = Machine(delivery: .streamed)
        #expect(created.fail() == .caller)
        #expect(created.fail() == .nobody)
        var queued = Machine(delivery: .buffered)
        _ = queued.start(hasSlot: false)
        #expect(queued.fail() == .caller)
        var streaming = running(.streamed)
        _ = streaming.headReceived(status: 200)
        #expect(streaming.fail() == .stream)
    }
}
