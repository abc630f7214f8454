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

    /// A value of a layer above the core, as the auth layer's user credential is.
    private struct Owner: RequestAttribute, Equatable { let name: String }
    /// Another one, to fill the bag past its inline slot.
    private struct Tenant: RequestAttribute, Equatable { let id: Int }
    /// A third.
    private struct Region: RequestAttribute, Equatable { let code: String }

    @Test func attributesSetOnACopyAreNotSeenByTheOriginal() {
        let original = Self.context()
        var copy = original
        copy.attributes[Owner.self] = Owner(name: "alice")
        #expect(original.attributes[Owner.self] == nil)
        #expect(copy.attributes[Owner.self] == Owner(name: "alice"))
    }

    @Test func attributesHoldOneValueOfEachTypeWhateverTheOrderTheyAreSetIn() {
        var attributes = RequestAttributes(Owner(name: "alice"))
        attributes[Tenant.self] = Tenant(id: 1)
        attributes[Region.self] = Region(code: "eu")
        attributes[Tenant.self] = Tenant(id: 2)
        attributes[Owner.self] = Owner(name: "bob")
        #expect(attributes[Owner.self] == Owner(name: "bob"))
        #expect(attributes[Tenant.self] == Tenant(id: 2))
        #expect(attributes[Region.self] == Region(code: "eu"))

        // The inline value removed: the others stay, and a value set again is the only one
        // of its type.
        attributes[Owner.self] = nil
        #expect(attributes[Owner.self] == nil)
        attributes[Tenant.self] = Tenant(id: 3)
        attributes[Tenant.self] = nil
        #expect(attributes[Tenant.self] == nil)
        #expect(attributes[Region.self] == Region(code: "eu"))
        attributes[Tenant.self] = Tenant(id: 4)
        attributes[Region.self] = nil
        #expect(attributes[Region.self] == nil)
        #expect(attributes[Tenant.self] == Tenant(id: 4))
        #expect(RequestAttributes()[Owner.self] == nil)
    }
}
