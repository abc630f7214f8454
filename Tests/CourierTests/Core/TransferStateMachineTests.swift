import Testing

@testable import Courier

/// `CurlTransfer.StateMachine` driven without sockets: every legal sequence of a transfer's
/// life, and the illegal ones, which answer with a defined no-op instead of trapping.
@Suite struct TransferStateMachineTests {
    typealias Machine = CurlTransfer.StateMachine

    /// A machine that runs with a slot.
    private func running(_ delivery: Machine.Delivery = .buffered) -> Machine {
        var machine = Machine(delivery: delivery)
        let answer1 = machine.start(hasSlot: true)
        #expect(answer1 == .attach)
        return machine
    }

    // MARK: Legal sequences

    @Test func aBufferedTransferAnswersTheCallerOnce() {
        var machine = running()
        #expect(machine.callerIsWaiting)
        machine.statusLineReceived()
        let answer1 = machine.headReceived(status: 200)
        #expect(answer1 == .final)
        #expect(machine.hasFinalHead)
        #expect(machine.bodyReceived() == .buffer)
        let answer2 = machine.completed(successfully: true)
        #expect(answer2 == .respond)
        #expect(machine.hasEnded)
        #expect(!machine.callerIsWaiting)
    }

    @Test func aStreamedTransferHandsTheHeadOverThenStreams() {
        var machine = running(.streamed)
        let answer1 = machine.headReceived(status: 200)
        #expect(answer1 == .finalStreamed)
        #expect(!machine.callerIsWaiting)
        #expect(machine.bodyReceived() == .stream)
        machine.receivePaused()
        #expect(machine.state == .running(.init(head: .streaming, isReceivePaused: true)))
        let answer2 = machine.updatePause()
        #expect(answer2)
        #expect(machine.state == .running(.init(head: .streaming)))
        let answer3 = machine.completed(successfully: true)
        #expect(answer3 == .finishStream)
    }

    @Test func interimHeadsWaitForTheFinalOne() {
        var machine = running(.streamed)
        machine.statusLineReceived()
        let answer1 = machine.headReceived(status: 100)
        #expect(answer1 == .interim)
        #expect(!machine.hasFinalHead)
        machine.statusLineReceived()
        let answer2 = machine.headReceived(status: 204)
        #expect(answer2 == .finalStreamed)
    }

    @Test func trailersDoNotHandTheHeadOverAgain() {
        var streamed = running(.streamed)
        let answer1 = streamed.headReceived(status: 200)
        #expect(answer1 == .finalStreamed)
        let answer2 = streamed.headReceived(status: 200)
        #expect(answer2 == .final)
        var buffered = running()
        let answer3 = buffered.headReceived(status: 200)
        #expect(answer3 == .final)
        let answer4 = buffered.headReceived(status: 200)
        #expect(answer4 == .final)
        let answer5 = buffered.completed(successfully: true)
        #expect(answer5 == .respond)
    }

    @Test func aFailureGoesToTheCallerBeforeAStreamedHeadAndToTheStreamAfter() {
        var beforeHead = running(.streamed)
        let answer1 = beforeHead.completed(successfully: false)
        #expect(answer1 == .fail(.caller))
        var afterHead = running(.streamed)
        _ = afterHead.headReceived(status: 200)
        let answer2 = afterHead.completed(successfully: false)
        #expect(answer2 == .fail(.stream))
        var buffered = running()
        _ = buffered.headReceived(status: 500)
        let answer3 = buffered.completed(successfully: false)
        #expect(answer3 == .fail(.caller))
    }

    @Test func aQueuedTransferRunsOnceASlotIsFree() {
        var machine = Machine(delivery: .buffered)
        let answer1 = machine.start(hasSlot: false)
        #expect(answer1 == .enqueue)
        #expect(machine.isQueued)
        #expect(machine.callerIsWaiting)
        let answer2 = machine.slotGranted()
        #expect(answer2)
        #expect(!machine.isQueued)
        #expect(machine.state == .running(.init()))
    }

    @Test func aTransferGoesAgainOnAFreshConnectionWithAClearSlate() {
        var machine = running()
        machine.sendPaused()
        let answer1 = machine.restart()
        #expect(answer1)
        #expect(machine.state == .running(.init()))
        let answer2 = machine.headReceived(status: 200)
        #expect(answer2 == .final)
    }

    @Test func aSuspensionAppliesOnlyWhileRunning() {
        var machine = Machine(delivery: .buffered)
        let answer1 = machine.updatePause()
        #expect(!answer1)
        let answer2 = machine.start(hasSlot: true)
        #expect(answer2 == .attach)
        let answer3 = machine.updatePause()
        #expect(answer3)
        // Resuming what is not paused still sets the handle's pause (libcurl: a no-op).
        let answer4 = machine.updatePause()
        #expect(answer4)
    }

    // MARK: Cancellation

    @Test func cancellingBeforeTheStartFailsTheStart() {
        var machine = Machine(delivery: .buffered)
        let answer1 = machine.cancel()
        #expect(answer1 == .deferToStart)
        let answer2 = machine.cancel()
        #expect(answer2 == .deferToStart)
        let answer3 = machine.start(hasSlot: true)
        #expect(answer3 == .failCancelled)
        #expect(machine.hasEnded)
        let answer4 = machine.start(hasSlot: true)
        #expect(answer4 == .ignore)
    }

    @Test func cancellingAQueuedTransferTakesItOutOfTheQueue() {
        var machine = Machine(delivery: .buffered)
        _ = machine.start(hasSlot: false)
        let answer1 = machine.cancel()
        #expect(answer1 == .leaveQueue(.caller))
        #expect(!machine.isQueued)
        let answer2 = machine.slotGranted()
        #expect(!answer2)
    }

    @Test func cancellingDuringTheHeadAbandonsAndIgnoresWhatFollows() {
        var machine = running(.streamed)
        machine.statusLineReceived()
        let answer1 = machine.cancel()
        #expect(answer1 == .abandon(.caller))
        let answer2 = machine.headReceived(status: 200)
        #expect(answer2 == .abort)
        #expect(machine.bodyReceived() == .abort)
        let answer3 = machine.completed(successfully: true)
        #expect(answer3 == .ignore)
        let answer4 = machine.completed(successfully: false)
        #expect(answer4 == .ignore)
        let answer5 = machine.cancel()
        #expect(answer5 == .ignore)
        let answer6 = machine.fail()
        #expect(answer6 == .nobody)
    }

    @Test func cancellingAStreamingTransferFailsTheStream() {
        var machine = running(.streamed)
        _ = machine.headReceived(status: 200)
        let answer1 = machine.cancel()
        #expect(answer1 == .abandon(.stream))
    }

    // MARK: Illegal sequences

    @Test func aBodyBeforeTheHead() {
        let buffered = running()
        #expect(buffered.bodyReceived() == .buffer)  // libcurl's bytes are kept
        let streamed = running(.streamed)
        #expect(streamed.bodyReceived() == .discard)  // there is no stream yet
        var unstarted = Machine(delivery: .buffered)
        #expect(unstarted.bodyReceived() == .abort)
        let answer1 = unstarted.headReceived(status: 200)
        #expect(answer1 == .abort)
        _ = unstarted.start(hasSlot: false)
        #expect(unstarted.bodyReceived() == .abort)
    }

    @Test func completingTwice() {
        var machine = running()
        let answer1 = machine.completed(successfully: true)
        #expect(answer1 == .respond)
        let answer2 = machine.completed(successfully: true)
        #expect(answer2 == .ignore)
        let answer3 = machine.completed(successfully: false)
        #expect(answer3 == .ignore)
        let answer4 = machine.fail()
        #expect(answer4 == .nobody)
    }

    @Test func pausingOrResumingAfterTheEnd() {
        var machine = running(.streamed)
        _ = machine.headReceived(status: 200)
        _ = machine.completed(successfully: true)
        machine.receivePaused()
        machine.sendPaused()
        let answer1 = machine.updatePause()
        #expect(!answer1)
        #expect(machine.state == .ended)
    }

    @Test func completingWhatNeverRan() {
        var created = Machine(delivery: .buffered)
        let answer1 = created.completed(successfully: true)
        #expect(answer1 == .ignore)
        #expect(created.callerIsWaiting)
        var queued = Machine(delivery: .buffered)
        _ = queued.start(hasSlot: false)
        let answer2 = queued.completed(successfully: false)
        #expect(answer2 == .ignore)
        #expect(queued.isQueued)
    }

    @Test func startingOrGrantingASlotTwice() {
        var machine = running()
        let answer1 = machine.start(hasSlot: true)
        #expect(answer1 == .ignore)
        let answer2 = machine.slotGranted()
        #expect(!answer2)
        #expect(machine.state == .running(.init()))
    }

    @Test func restartingAfterAStreamedHeadOrTheEnd() {
        var streamed = running(.streamed)
        _ = streamed.headReceived(status: 200)
        let answer1 = streamed.restart()
        #expect(!answer1)
        var ended = running()
        _ = ended.completed(successfully: false)
        let answer2 = ended.restart()
        #expect(!answer2)
        var queued = Machine(delivery: .buffered)
        _ = queued.start(hasSlot: false)
        let answer3 = queued.restart()
        #expect(!answer3)
    }

    @Test func failingTellsWhoeverWaits() {
        var created = Machine(delivery: .streamed)
        let answer1 = created.fail()
        #expect(answer1 == .caller)
        let answer2 = created.fail()
        #expect(answer2 == .nobody)
        var queued = Machine(delivery: .buffered)
        _ = queued.start(hasSlot: false)
        let answer3 = queued.fail()
        #expect(answer3 == .caller)
        var streaming = running(.streamed)
        _ = streaming.headReceived(status: 200)
        let answer4 = streaming.fail()
        #expect(answer4 == .stream)
    }
}
