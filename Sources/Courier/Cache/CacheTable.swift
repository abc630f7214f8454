import HTTPTypes
import Synchronization

/// The stored responses of an ``HTTPCache``, with their order of use and their size: the state
/// its lock guards.
///
/// Each key holds the responses of its variants (`Vary`). The least recently used responses
/// go first when the bytes exceed the limit.
struct CacheTable: Sendable {
    /// The responses of each key, newest first.
    private(set) var variants: [CacheKey: [CachedResponse]] = [:]
    /// The keys of each URL, in every partition, for invalidation.
    private var keysByTarget: [String: Set<CacheKey>] = [:]
    /// The order of use, least recent first.
    private var order = UseOrder()
    /// The bytes held, as ``CachedResponse/byteCount`` counts them.
    private(set) var bytes = 0
    /// The source of response ids: never the same twice in a process, in any cache, also after
    /// ``HTTPCache/removeAll()``: a validation in flight is filed by the id of the response it
    /// validates, and must never be taken for that of a response stored later.
    private static let nextID = Atomic<UInt64>(1)

    /// A new id for a response to store.
    func makeID() -> UInt64 {
        Self.nextID.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    /// The response of `key` that a request with `fields` selects, marked as just used.
    mutating func lookup(_ key: CacheKey, fields: HTTPFields) -> CachedResponse? {
        guard let entry = variants[key]?.first(where: { $0.variance.matches(fields) }) else { return nil }
        order.touch(entry.id, key: key)
        return entry
    }

    /// Stores `entry` under `key`, replacing a response of the same variance, then evicts the
    /// least recently used responses until the bytes are at most `limit`.
    mutating func store(_ entry: CachedResponse, for key: CacheKey, limit: Int) {
        var list = variants[key] ?? []
        for old in list where old.variance == entry.variance { forget(old, key: key, list: &list) }
        list.insert(entry, at: 0)
        variants[key] = list
        keysByTarget[key.target, default: []].insert(key)
        bytes += entry.byteCount
        order.touch(entry.id, key: key)
        while bytes > limit, let oldest = order.oldest { remove(id: oldest.id, key: oldest.key) }
    }

    /// Removes the response `id` of `key`, if it is still there.
    mutating func remove(id: UInt64, key: CacheKey) {
        guard var list = variants[key], let entry = list.first(where: { $0.id == id }) else {
            order.remove(id)
            return
        }
        forget(entry, key: key, list: &list)
        if list.isEmpty {
            variants[key] = nil
            keysByTarget[key.target]?.remove(key)
            if keysByTarget[key.target]?.isEmpty == true { keysByTarget[key.target] = nil }
        } else {
            variants[key] = list
        }
    }

    /// Removes every response of the URL `target`, in `partition` or, when it is `nil`, in
    /// every partition.
    mutating func removeAll(target: String, in partition: CachePartition?) {
        for key in keysByTarget[target] ?? [] where partition == nil || key.partition == partition {
            for entry in variants[key] ?? [] { remove(id: entry.id, key: key) }
        }
    }

    /// Removes every response of `partition`.
    mutating func removeAll(in partition: CachePartition) {
        for (key, list) in variants where key.partition == partition {
            for entry in list { remove(id: entry.id, key: key) }
        }
    }

    /// Takes `entry` out of `list`, the order and the byte count.
    private mutating func forget(_ entry: CachedResponse, key: CacheKey, list: inout [CachedResponse]) {
        list.removeAll { $0.id == entry.id }
        bytes -= entry.byteCount
        order.remove(entry.id)
    }
}

/// The order in which stored responses were last used: a doubly linked list over their ids,
/// every step O(1).
struct UseOrder: Sendable {
    /// A response's neighbours and key.
    private struct Link: Sendable {
        var older: UInt64?
        var newer: UInt64?
        let key: CacheKey
    }

    private var links: [UInt64: Link] = [:]
    private var oldestID: UInt64?
    private var newestID: UInt64?

    /// The least recently used response and its key.
    var oldest: (id: UInt64, key: CacheKey)? {
        guard let oldestID, let link = links[oldestID] else { return nil }
        return (oldestID, link.key)
    }

    /// Marks `id` as just used.
    mutating func touch(_ id: UInt64, key: CacheKey) {
        remove(id)
        links[id] = Link(older: newestID, newer: nil, key: key)
        if let newestID { links[newestID]?.newer = id }
        newestID = id
        if oldestID == nil { oldestID = id }
    }

    /// Forgets `id`.
    mutating func remove(_ id: UInt64) {
        guard let link = links.removeValue(forKey: id) else { return }
        if let older = link.older { links[older]?.newer = link.newer } else { oldestID = link.newer }
        if let newer = link.newer { links[newer]?.older = link.older } else { newestID = link.older }
    }
}
