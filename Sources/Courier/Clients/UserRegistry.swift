/// The keyed users of one ``ResourceAccess`` in memory: at most a maximum of them, the least
/// recently used evicted first, and never one that is in use.
///
/// A lookup takes one lock, one hash of the key and one dictionary probe; it marks the user
/// as recently used. Past the maximum, a new user evicts an old one with the clock algorithm
/// (an approximation of least-recently-used that needs no list to reorder on every hit): the
/// hand sweeps a ring of the users, giving each recently used one a second chance.
///
/// A user is in use — and kept — while anything but the registry holds its ``UserClient``
/// (a caller, a request in flight, a running ``NetworkTask``) or while one of its brokers
/// renews or loads a token. So there is never more than one ``UserClient`` per key, and a
/// renewal never runs twice because its user was evicted halfway. When every user is in use,
/// the registry grows past its maximum rather than wait, and shrinks back as users come free.
///
/// An evicted user's tokens stay in the ``TokenStore``: the next lookup makes a new
/// ``UserClient`` whose broker reads them on first use.
final class UserRegistry: Sendable {
    /// The most users kept in memory when none is in use.
    let maximumCount: Int
    private let make: @Sendable (String) -> UserClient
    private let state = LockedBox(State())

    private struct Slot {
        var client: UserClient
        /// Where the key is in the ring.
        var position: Int
        /// Used since the hand last passed: spared once.
        var recentlyUsed: Bool
    }

    private struct State {
        var users: [String: Slot] = [:]
        /// The keys, in no particular order, for the hand to sweep.
        var ring: [String] = []
        var hand = 0
        var evictions = 0
    }

    /// Creates a registry.
    ///
    /// - Parameters:
    ///   - maximumCount: The most users kept in memory (at least 1).
    ///   - make: Makes the client of a user that is not in memory.
    init(maximumCount: Int, make: @escaping @Sendable (String) -> UserClient) {
        self.maximumCount = max(1, maximumCount)
        self.make = make
    }

    /// The client of `key`: the one in memory, or a new one.
    func client(for key: String) -> UserClient {
        state.withLock { state in
            if let index = state.users.index(forKey: key) {
                state.users.values[index].recentlyUsed = true
                return state.users.values[index].client
            }
            while state.users.count >= maximumCount, Self.evictOne(&state) {}
            let client = make(key)
            state.users[key] = Slot(client: client, position: state.ring.count, recentlyUsed: true)
            state.ring.append(key)
            return client
        }
    }

    /// How many users are in memory.
    var count: Int { state.withLock { $0.users.count } }

    /// How many users were evicted so far.
    var evictions: Int { state.withLock { $0.evictions } }

    /// Whether `key` is in memory.
    func contains(_ key: String) -> Bool { state.withLock { $0.users[key] != nil } }

    /// Evicts one user that is not in use, sweeping at most twice around the ring.
    ///
    /// - Returns: Whether one was evicted.
    private static func evictOne(_ state: inout State) -> Bool {
        var steps = 2 * state.ring.count
        while steps > 0, !state.ring.isEmpty {
            steps -= 1
            if state.hand >= state.ring.count { state.hand = 0 }
            let position = state.hand
            guard let index = state.users.index(forKey: state.ring[position]) else {
                preconditionFailure("the ring and the users disagree")
            }
            if state.users.values[index].recentlyUsed {
                state.users.values[index].recentlyUsed = false
                state.hand += 1
                continue
            }
            // Held by the registry alone, and no renewal running: nobody can reach it without
            // this lock, so evicting it cannot leave two clients for one user.
            guard isKnownUniquelyReferenced(&state.users.values[index].client),
                !state.users.values[index].client.hasOperationInFlight
            else {
                state.hand += 1
                continue
            }
            state.users.remove(at: index)
            let last = state.ring.removeLast()
            if position < state.ring.count {
                state.ring[position] = last
                state.users[last]?.position = position
            }
            state.evictions += 1
            return true
        }
        return false
    }
}
