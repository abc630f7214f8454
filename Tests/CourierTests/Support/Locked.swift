@testable import Courier

/// A shareable lock-guarded value for test doubles that several tasks touch.
typealias Locked = LockedBox

extension LockedBox {
    var value: Value { withLock { $0 } }
}
