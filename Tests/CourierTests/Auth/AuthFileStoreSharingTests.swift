import Crypto
import Foundation
import Testing

@testable import Courier

/// The encrypted file store as a shared store: entry versions, compare-and-swap, files from
/// before versions, and leases between store instances (as between processes: a `flock`
/// belongs to the open file, not to the process).
@Suite(.timeLimit(.minutes(1)))
struct AuthFileStoreSharingTests {
    let directory: String
    let key = SymmetricKey(size: .bits256)

    init() throws {
        directory = NSTemporaryDirectory() + "courier-shared-store-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    var path: String { directory + "/tokens.store" }
    let userKey = TokenStoreKey(clientID: "courier-user", level: .user)

    func store() -> EncryptedFileTokenStore { EncryptedFileTokenStore(path: path, keyProvider: .key(key)) }

    func token(_ name: String) -> OAuth2Token {
        OAuth2Token(
            accessToken: "access-\(name)",
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
            expiresAt: Date(timeIntervalSince1970: 1_800_000_600),
            refreshToken: "refresh-\(name)",
            scope: [.read]
        )
    }

    @Test func writesRaiseTheVersionAndAStaleCompareAndSwapWritesNothing() async throws {
        #expect(try await store().entry(for: userKey) == TokenStoreEntry(token: nil, version: 0))
        let first = try #require(try await store().setToken(token("a"), for: userKey, ifVersion: 0))
        #expect(first.version == 1)
        #expect(try await store().setToken(token("b"), for: userKey, ifVersion: 0) == nil)
        #expect(try await store().token(for: userKey) == token("a"))
        try await store().setToken(token("c"), for: userKey)  // a plain write raises it too
        #expect(try await store().entry(for: userKey).version == 2)
        // A removal keeps its version, so a copy from before it cannot bring the token back.
        let removed = try #require(try await store().setToken(nil, for: userKey, ifVersion: 2))
        #expect(removed == TokenStoreEntry(token: nil, version: 3))
        #expect(try await store().setToken(token("old"), for: userKey, ifVersion: 2) == nil)
        #expect(try await store().entry(for: userKey) == TokenStoreEntry(token: nil, version: 3))
    }

    @Test func aFileFromBeforeVersionsReadsAsVersionOne() async throws {
        // The document as earlier releases wrote it: entries without versions, no removals.
        let old = EncryptedFileTokenStore.Document(entries: [.init(key: userKey, token: token("old"))])
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        let plaintext = try encoder.encode(old)
        #expect(!String(decoding: plaintext, as: UTF8.self).contains("removed"))
        try TokenSealer(keyProvider: .key(key)).seal(plaintext, key: key).write(to: URL(fileURLWithPath: path))

        #expect(try await store().entry(for: userKey) == TokenStoreEntry(token: token("old"), version: 1))
        #expect(try await store().setToken(token("new"), for: userKey, ifVersion: 1)?.version == 2)
    }

    @Test func aLeaseExcludesOtherInstancesUntilReleased() async throws {
        let holder = store()
        let other = store()
        let lease = try #require(try await holder.acquireLease(for: userKey, duration: .seconds(30)))
        #expect(try await other.acquireLease(for: userKey, duration: .seconds(30)) == nil)
        #expect(try await holder.acquireLease(for: userKey, duration: .seconds(30)) == nil)
        // Other keys have leases of their own.
        let device = TokenStoreKey(clientID: "courier-device", level: .device)
        #expect(try await other.acquireLease(for: device, duration: .seconds(30)) != nil)
        try await holder.releaseLease(lease)
        #expect(try await other.acquireLease(for: userKey, duration: .seconds(30)) != nil)
    }

    @Test func aLeaseHeldPastItsExpiryIsTakenOver() async throws {
        let stuck = store()
        let other = store()
        let lease = try #require(try await stuck.acquireLease(for: userKey, duration: .milliseconds(50)))
        let deadline = ContinuousClock.now + .seconds(5)
        var taken: TokenStoreLease?
        while taken == nil, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
            taken = try await other.acquireLease(for: userKey, duration: .seconds(30))
        }
        let takeover = try #require(taken)
        #expect(Date() >= lease.expiresAt)
        // The stuck holder's late release leaves the new lease alone.
        try await stuck.releaseLease(lease)
        #expect(try await stuck.acquireLease(for: userKey, duration: .seconds(30)) == nil)
        try await other.releaseLease(takeover)
    }

    /// What coordination costs a renewal on this store: one more read and a lease taken and
    /// released. Printed, not asserted.
    @Test func whatTheLeaseCostsARenewal() async throws {
        let store = store()
        _ = try await store.setToken(token("a"), for: userKey, ifVersion: 0)
        let rounds = 200
        let clock = ContinuousClock()
        let reads = try await clock.measure {
            for _ in 0..<rounds { _ = try await store.entry(for: userKey) }
        }
        let leases = try await clock.measure {
            for _ in 0..<rounds {
                let lease = try await store.acquireLease(for: userKey, duration: .seconds(10))
                try await store.releaseLease(try #require(lease))
            }
        }
        var version: UInt64 = 1
        let writes = try await clock.measure {
            for index in 0..<rounds / 4 {
                version = try #require(try await store.setToken(token("\(index)"), for: userKey, ifVersion: version))
                    .version
            }
        }
        print(
            "[figures] encrypted file store, per operation: entry read \(reads / rounds), "
                + "lease acquire + release \(leases / rounds), compare-and-swap write \(writes / (rounds / 4))"
        )
    }
}
