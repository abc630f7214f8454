import Testing

@testable import Courier

/// Transfer options keep every duration and deadline exactly as set, and `nil` as `nil`, though
/// they store each in a plain `Duration`'s 16 bytes.
struct TransferOptionsTests {
    @Test func durationsAndDeadlinesReadBackExactlyAsSet() {
        var options = TransferOptions()
        #expect(options.connectTimeout == .seconds(10))
        #expect(options.stallTimeout == .seconds(30))
        #expect(options.deadline == nil)

        let durations: [Duration] = [
            .zero, .nanoseconds(1), .seconds(0.3), .milliseconds(-250),
            Duration(secondsComponent: 7, attosecondsComponent: 1),
            Duration(secondsComponent: .max, attosecondsComponent: 999_999_999_999_999_999),
            Duration(secondsComponent: .min, attosecondsComponent: 1),
        ]
        for duration in durations {
            options.connectTimeout = duration
            options.stallTimeout = duration
            #expect(options.connectTimeout == duration)
            #expect(options.stallTimeout == duration)
        }
        let now = ContinuousClock.now
        for deadline in [now, now - .seconds(3_600), now + .seconds(0.3), now.advanced(by: .nanoseconds(1))] {
            options.deadline = deadline
            #expect(options.deadline == deadline)
        }
    }

    @Test func nilStaysNilAndOptionsCompareByWhatTheyHold() {
        var options = TransferOptions(connectTimeout: nil, deadline: .now + .seconds(1), stallTimeout: nil)
        #expect(options.connectTimeout == nil)
        #expect(options.stallTimeout == nil)
        #expect(options.deadline != nil)
        options.deadline = nil
        #expect(options.deadline == nil)

        var other = TransferOptions(connectTimeout: nil, stallTimeout: nil)
        #expect(other == options)
        other.stallTimeout = .zero
        #expect(other != options)
        other.stallTimeout = nil
        #expect(other == options)
        #expect(Set([other, options]).count == 1)
    }
}
