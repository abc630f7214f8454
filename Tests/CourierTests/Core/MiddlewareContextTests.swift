import Logging
import Testing

@testable import Courier

/// A context is a value: copies share their storage until one of them changes, and a change
/// to one copy is never seen by another (MiddlewareContext's copy-on-write storage).
struct MiddlewareContextTests {
    private static func context() -> MiddlewareContext {
        MiddlewareContext(
            taskID: .next(),
            logger: Logger(label: "test"),
            options: TransferOptions(maximumRedirects: 5),
            control: .none
        )
    }

    @Test func aChangedCopyLeavesTheOriginalAsItWas() {
        let original = Self.context()
        var copy = original
        copy.attempt += 1
        copy.options.maximumRedirects = 0
        copy.options.deadline = .now + .seconds(3)
        copy.retryPolicy = .never
        copy.logger[metadataKey: "changed"] = "yes"

        #expect(original.attempt == 1)
        #expect(original.options.maximumRedirects == 5)
        #expect(original.options.deadline == nil)
        #expect(original.retryPolicy == nil)
        #expect(original.logger[metadataKey: "changed"] == nil)
        #expect(copy.attempt == 2)
        #expect(copy.options.maximumRedirects == 0)
        #expect(copy.options.deadline != nil)
        #expect(copy.retryPolicy == .never)
        #expect(copy.taskID == original.taskID)
    }

    @Test func theOriginalChangedAfterACopyLeavesTheCopyAsItWas() {
        var original = Self.context()
        let copy = original
        original.attempt = 7
        original.options.maximumRedirects = 1
        #expect(copy.attempt == 1)
        #expect(copy.options.maximumRedirects == 5)
        #expect(original.attempt == 7)
        #expect(original.options.maximumRedirects == 1)
    }

    @Test func aDeadlineReadsBackAsTheInstantThatWasSet() {
        let deadline = ContinuousClock.now + .milliseconds(1500)
        var options = TransferOptions(deadline: deadline)
        #expect(options.deadline == deadline)
        #expect(options == TransferOptions(deadline: deadline))
        options.deadline = nil
        #expect(options.deadline == nil)
        #expect(options == TransferOptions())
    }
}
