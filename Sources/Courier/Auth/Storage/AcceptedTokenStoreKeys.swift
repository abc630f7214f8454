import Crypto
import Foundation

/// The keys a ``TokenSealer`` opens with besides its current one (those of
/// ``TokenStoreKeyProvider/accepting(_:)``), each asked of its provider once and kept with its
/// key id.
///
/// A key that cannot be loaded is remembered as a failure and does not stop the sealer: it is
/// asked for again only after a value turned up under a key id that no loaded key has, so a
/// broken provider costs nothing while every value is under a key the sealer holds.
final class AcceptedTokenStoreKeys: Sendable {
    /// What is known of one accepted key.
    private enum Slot {
        /// Not asked yet.
        case unasked
        /// Loaded, with its key id.
        case loaded(SymmetricKey, id: [UInt8])
        /// Its provider failed, for this reason.
        case failed(String)
    }

    /// The slots, one per provider, and whether failed ones are to be asked again.
    private struct State {
        var slots: [Slot]
        var retryFailed = false
    }

    private let providers: [TokenStoreKeyProvider]
    private let state: LockedBox<State>

    /// Creates the set, nothing asked yet.
    ///
    /// - Parameter providers: The providers of the accepted keys.
    init(_ providers: [TokenStoreKeyProvider]) {
        self.providers = providers
        self.state = LockedBox(State(slots: Array(repeating: .unasked, count: providers.count)))
    }

    /// Asks the providers not asked yet, and the failed ones when a value under an unknown
    /// key was met since; a provider that fails is remembered, not thrown.
    func load() async {
        guard !providers.isEmpty else { return }
        let pending = state.withLock { state -> [Int] in
            let indices = state.slots.indices.filter { index in
                switch state.slots[index] {
                case .unasked: true
                case .failed: state.retryFailed
                case .loaded: false
                }
            }
            state.retryFailed = false
            return indices
        }
        for index in pending {
            let slot: Slot
            do {
                let key = try await providers[index].key()
                if key.bitCount == 256 {
                    slot = .loaded(key, id: TokenSealer.keyID(key))
                } else {
                    slot = .failed("it has \(key.bitCount) bits; AES-256 needs 256")
                }
            } catch let error as CourierError {
                slot = .failed(error.message.isEmpty ? "\(error.kind)" : error.message)
            } catch {
                slot = .failed("the key provider failed: \(error)")
            }
            state.withLock { $0.slots[index] = slot }
        }
    }

    /// The loaded key whose key id is `id`.
    func key(withID id: [UInt8]) -> SymmetricKey? {
        state.withLock { state in
            for case .loaded(let key, let keyID) in state.slots where keyID == id { return key }
            return nil
        }
    }

    /// Why accepted keys could not be loaded, one reason each; and, when there are any,
    /// marks them to be asked for again, since a value needed one of them.
    func failuresToRetry() -> [String] {
        state.withLock { state in
            let reasons = state.slots.compactMap { slot -> String? in
                if case .failed(let reason) = slot { return reason }
                return nil
            }
            if !reasons.isEmpty { state.retryFailed = true }
            return reasons
        }
    }
}
