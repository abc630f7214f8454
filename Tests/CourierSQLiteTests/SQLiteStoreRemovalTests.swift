import Courier
import Foundation
import Testing

@testable import CourierSQLite

/// Logout of a client and of one user, and a store reopened on the same file.
@Suite(.timeLimit(.minutes(1)))
struct SQLiteStoreRemovalTests {
    let fixtures: StoreFixtures

    init() throws { fixtures = try StoreFixtures() }

    func key(_ client: String, _ level: AuthorizationLevel, _ user: String?) -> TokenStoreKey {
        TokenStoreKey(clientID: client, level: level, user: user)
    }

    /// Writes a token under each key, named after the key.
    func fill(_ store: SQLiteTokenStore, _ keys: [TokenStoreKey]) async throws {
        for key in keys { try await store.setToken(StoreFixtures.token(key.description), for: key) }
    }

    @Test func removingOneUserLeavesEveryOtherUserAndTheSingleUser() async throws {
        let store = fixtures.store()
        let alice = [key("app", .user, "alice"), key("app", .implicit, "alice"), key("app", .user, "alice")]
        let others = [
            key("app", .user, "bob"), key("app", .user, nil), key("app", .device, nil), key("other", .user, "alice"),
            key("app", .user, "alice2"),
        ]
        try await fill(store, alice + others)
        let before = try await store.entry(for: alice[0])
        try await store.removeTokens(clientID: "app", user: "alice")
        for key in alice {
            let entry = try await store.entry(for: key)
            #expect(entry.token == nil && entry.version > before.version, "\(key)")
        }
        for key in others { #expect(try await store.token(for: key) == StoreFixtures.token(key.description)) }

        // `nil` is the single user and the tokens of no user: not the keyed users.
        try await store.removeTokens(clientID: "app", user: nil)
        #expect(try await store.token(for: key("app", .user, nil)) == nil)
        #expect(try await store.token(for: key("app", .device, nil)) == nil)
        #expect(try await store.token(for: key("app", .user, "bob")) != nil)
    }

    @Test func removingAClientLeavesOtherClients() async throws {
        let store = fixtures.store()
        let app = [key("app", .user, "alice"), key("app", .user, nil), key("app", .device, nil)]
        let other = [key("other", .user, "alice"), key("other", .device, nil)]
        try await fill(store, app + other)
        try await store.removeTokens(clientID: "app")
        for key in app { #expect(try await store.token(for: key) == nil) }
        for key in other { #expect(try await store.token(for: key) == StoreFixtures.token(key.description)) }
        // Nothing left to remove: nothing changes.
        let removed = try await store.entry(for: app[0])
        try await store.removeTokens(clientID: "app")
        #expect(try await store.entry(for: app[0]) == removed)
    }

    @Test func aStoreOpenedAgainSeesEverything() async throws {
        let keys = (0..<50).map { key("app", .user, "user-\($0)") } + [key("app", .device, nil)]
        var entries: [TokenStoreKey: TokenStoreEntry] = [:]
        do {
            let store = fixtures.store()
            try await fill(store, keys)
            try await store.removeTokens(clientID: "app", user: "user-7")
            for key in keys { entries[key] = try await store.entry(for: key) }
            await store.close()
        }
        let reopened = fixtures.store()
        for key in keys { #expect(try await reopened.entry(for: key) == entries[key]) }
        #expect(entries[key("app", .user, "user-7")]?.token == nil)
        #expect(
            entries[key("app", .user, "user-8")]?.token == StoreFixtures.token(key("app", .user, "user-8").description)
        )
        // The file and its key are the user's alone.
        let attributes = try FileManager.default.attributesOfItem(atPath: fixtures.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
    }

    @Test func theDefaultKeyLivesBesideTheFile() async throws {
        let store = SQLiteTokenStore(path: fixtures.path)
        let key = key("app", .user, "alice")
        try await store.setToken(StoreFixtures.token("a"), for: key)
        #expect(FileManager.default.fileExists(atPath: fixtures.path + ".key"))
        #expect(try await SQLiteTokenStore(path: fixtures.path).token(for: key) == StoreFixtures.token("a"))
    }
}
