import Courier
import Foundation
import Testing

@testable import CourierSQLite

#if canImport(Glibc)
import Glibc
#endif

/// A full disk: the write that does not fit fails with a typed error, and everything the store
/// held before stays readable — in this store, and in a store opened on the file afterwards.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SQLiteStoreDiskFullTests {
    /// A key per user.
    static func key(_ index: Int) -> TokenStoreKey {
        TokenStoreKey(clientID: "courier-user", level: .user, user: "user-\(index)")
    }

    /// Writes users' tokens until a write fails (at most `limit`), checks the failure and that
    /// every committed token is still there, then calls `makeRoom` and writes once more.
    ///
    /// - Returns: How many writes were committed before the store was full.
    static func fillUntilFull(
        _ store: SQLiteTokenStore,
        reopen: () -> SQLiteTokenStore,
        limit: Int = 5000,
        makeRoom: () async throws -> Void
    ) async throws -> Int {
        var committed = 0
        var failure: CourierError?
        while committed < limit {
            do {
                try await store.setToken(StoreFixtures.token("user-\(committed)"), for: key(committed))
                committed += 1
            } catch let error as CourierError {
                failure = error
                break
            }
        }
        let error = try #require(failure, "\(limit) writes fitted")
        #expect(error.kind == .tokenStoreIOFailure, "\(error)")
        #expect(error.message.contains("disk is full"), "\(error)")
        // Nothing committed was lost, in this store or in another opened now; the write that
        // failed left nothing.
        let other = reopen()
        #expect(try await other.token(for: key(-1)) == StoreFixtures.token("first"))
        for index in 0..<committed {
            #expect(try await store.token(for: key(index)) == StoreFixtures.token("user-\(index)"))
            #expect(try await other.token(for: key(index)) == StoreFixtures.token("user-\(index)"))
        }
        #expect(try await store.entry(for: key(committed)) == TokenStoreEntry(token: nil, version: 0))
        // Removals and leases fail the same way or fit; either way nothing breaks.
        _ = try? await store.acquireLease(for: key(0), duration: .seconds(1))
        try await makeRoom()
        try await store.setToken(StoreFixtures.token("after"), for: key(committed))
        #expect(try await other.token(for: key(committed)) == StoreFixtures.token("after"))
        await other.close()
        return committed
    }

    @Test func aDatabaseAtItsPageLimitRefusesTheWriteAndKeepsWhatItHeld() async throws {
        let fixtures = try StoreFixtures()
        defer { fixtures.remove() }
        let store = fixtures.store()
        try await store.setToken(StoreFixtures.token("first"), for: Self.key(-1))
        // The writer's connection may not grow the file past the pages it has now, plus a few.
        let pages = try await store.write("test") { connection in try connection.pragma("page_count") }
        try await store.write("test") { connection in try connection.execute("PRAGMA max_page_count = \(pages + 4)") }
        let committed = try await Self.fillUntilFull(
            store,
            reopen: { fixtures.store() },
            makeRoom: {
                try await store.write("test") { connection in
                    try connection.execute("PRAGMA max_page_count = 1000000")
                }
            }
        )
        print("[figures] SQLite store at max_page_count \(pages + 4): \(committed) writes fitted")
    }

    @Test(.enabled(if: getuid() == 0, "mounting a small file system needs root"))
    func aFullFileSystemRefusesTheWriteAndKeepsWhatItHeld() async throws {
        let fixtures = try StoreFixtures()
        defer { fixtures.remove() }
        let mountPoint = fixtures.directory + "/small"
        try FileManager.default.createDirectory(atPath: mountPoint, withIntermediateDirectories: true)
        try Self.run("/bin/mount", ["-t", "tmpfs", "-o", "size=512k,mode=0700", "tmpfs", mountPoint])
        defer { try? Self.run("/bin/umount", ["-l", mountPoint]) }
        let path = mountPoint + "/tokens.sqlite"
        let store = SQLiteTokenStore(path: path, keyProvider: .key(fixtures.key))
        try await store.setToken(StoreFixtures.token("first"), for: Self.key(-1))
        // Everything the file system has left goes to a filler file.
        let filler = mountPoint + "/filler"
        let fd = open(filler, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        let block = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<1024 {
            guard block.withUnsafeBytes({ write(fd, $0.baseAddress, $0.count) }) > 0 else { break }
        }
        close(fd)
        let committed = try await Self.fillUntilFull(
            store,
            reopen: { SQLiteTokenStore(path: path, keyProvider: .key(fixtures.key)) },
            makeRoom: { try FileManager.default.removeItem(atPath: filler) }
        )
        await store.close()
        print("[figures] SQLite store on a full 512 KiB tmpfs: \(committed) writes fitted after the filler")
    }

    /// Runs a command and fails when it fails.
    static func run(_ executable: String, _ arguments: [String]) throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else {
            throw TestSetupError(message: "\(executable) \(arguments.joined(separator: " ")) failed")
        }
    }
}
