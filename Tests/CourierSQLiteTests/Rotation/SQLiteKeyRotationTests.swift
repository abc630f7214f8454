import Courier
import Crypto
import Foundation
import Testing

@testable import CourierSQLite

/// The key of a store of 10,000 users changes while four processes use it: the processes are
/// restarted one at a time through the steps of "Rotate the key" in the docs (seal with
/// A and accept B; seal with B and accept A; `resealEntries()`; B alone), and none of them ever
/// fails to open a token, no committed write is lost, and at the end every token opens under B
/// alone and none under A.
@Suite(.serialized, .timeLimit(.minutes(3)))
struct SQLiteKeyRotationTests {
    static let users = 10_000
    static let processes = 4
    /// How many writes a restarted process commits before the next one is restarted.
    static let commitsPerRestart = 25

    static func key(_ user: Int) -> TokenStoreKey {
        TokenStoreKey(clientID: "rotation", level: .user, user: String(format: "user-%05d", user))
    }

    @Test func theKeyChangesUnderFourProcessesWithoutAFailedReadOrALostWrite() async throws {
        let fixtures = try StoreFixtures()
        defer { fixtures.remove() }
        let keyA = fixtures.key
        let keyB = SymmetricKey(size: .bits256)
        let clock = ContinuousClock()
        let began = clock.now

        // 10,000 users, each with a token sealed under A.
        let filled = try await fixtures.store().fill(
            (0..<Self.users).map { (Self.key($0), StoreFixtures.token("fill-\($0)")) }
        )
        try #require(filled == Self.users)
        let fillVersion = try await fixtures.store().entry(for: Self.key(0)).version

        let fleet = try RotationFleet(
            path: fixtures.path,
            directory: fixtures.directory,
            users: Self.users,
            slots: Self.processes
        )
        do {
            for slot in 0..<Self.processes {
                try await fleet.start(slot: slot, step: .init(seal: keyA, accept: nil), commits: Self.commitsPerRestart)
            }
            // Step 1: every process learns B while all still seal with A. Step 2: each seals
            // with B in turn; those not yet restarted open what it writes, because they accept B.
            for step in [RotationFleet.Step(seal: keyA, accept: keyB), .init(seal: keyB, accept: keyA)] {
                for slot in 0..<Self.processes {
                    try await fleet.stop(slot: slot)
                    try await fleet.start(slot: slot, step: step, commits: Self.commitsPerRestart)
                }
            }
            // Every process seals with B: the sweep takes the rest, while they keep writing.
            let sweeper = SQLiteTokenStore(
                path: fixtures.path,
                keyProvider: TokenStoreKeyProvider.key(keyB).accepting(.key(keyA))
            )
            let sweepBegan = clock.now
            let resealed = try await sweeper.resealEntries()
            let sweepTook = clock.now - sweepBegan
            let written = fleet.commits.count
            #expect(resealed >= Self.users - written && resealed <= Self.users, "resealed \(resealed)")
            #expect(try await sweeper.resealEntries() == 0)
            // Step 3: A is dropped, one process at a time.
            for slot in 0..<Self.processes {
                try await fleet.stop(slot: slot)
                try await fleet.start(slot: slot, step: .init(seal: keyB, accept: nil), commits: Self.commitsPerRestart)
            }
            for slot in 0..<Self.processes { try await fleet.stop(slot: slot) }
            print(
                "key rotation: \(fleet.totalCommits) writes committed by \(Self.processes * 4) processes, "
                    + "\(fleet.conflicts) lost a compare-and-swap, \(fleet.commits.count) users written; "
                    + "\(resealed) sealed again in \(sweepTook)"
            )
        } catch {
            for slot in 0..<Self.processes { try? await fleet.stop(slot: slot) }
            throw error
        }
        #expect(fleet.errors.isEmpty, "\(fleet.errors)")

        // Every row is sealed under B, none under A.
        let rows = try await fixtures.store(key: keyB).sealedRows()
        #expect(rows.count == Self.users)
        let sealer = fixtures.store(key: keyB)
        var underB = 0
        var underA = 0
        for row in rows {
            if try await sealer.isSealed(row.sealed, under: .key(keyB)) { underB += 1 }
            if try await sealer.isSealed(row.sealed, under: .key(keyA)) { underA += 1 }
        }
        #expect(underB == Self.users && underA == 0)

        // A store with B alone opens every entry; with A alone, none. Each entry is the last
        // write committed to it, and its writes form one chain of versions: each was based on
        // the version the one before it wrote, so none was lost under another.
        let storeB = fixtures.store(key: keyB)
        let storeA = fixtures.store(key: keyA)
        var chainBreaks: [String] = []
        for user in 0..<Self.users {
            let key = Self.key(user)
            let entry = try await storeB.entry(for: key)
            let writes = (fleet.commits[user] ?? []).sorted { $0.version < $1.version }
            var previous = fillVersion
            for write in writes {
                if write.readVersion != previous || write.version <= previous {
                    chainBreaks.append("user \(user): \(write) after version \(previous)")
                }
                previous = write.version
            }
            if let last = writes.last {
                #expect(entry.version == last.version && entry.token?.accessToken == last.accessToken, "user \(user)")
            } else {
                #expect(entry == TokenStoreEntry(token: StoreFixtures.token("fill-\(user)"), version: fillVersion))
            }
            do {
                _ = try await storeA.entry(for: key)
                Issue.record("user \(user) opened under A alone")
            } catch let error as CourierError where error.kind == .tokenStoreWrongKey {}
        }
        #expect(chainBreaks.isEmpty, "\(chainBreaks.prefix(10))")
        print("key rotation test: \(clock.now - began)")
    }
}
