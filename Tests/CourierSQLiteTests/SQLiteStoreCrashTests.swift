import Courier
import Crypto
import Foundation
import Testing

@testable import CourierSQLite

/// A process that writes tokens in a loop is killed (SIGKILL) in the middle of a write, five
/// times over: each time the store opens, is intact, and holds every write the process
/// reported committed.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SQLiteStoreCrashTests {
    static let users = 8

    static func key(_ user: Int) -> TokenStoreKey {
        TokenStoreKey(clientID: "crash", level: .user, user: "u\(user)")
    }

    @Test func aWriterKilledMidWriteLosesNoCommittedToken() async throws {
        let fixtures = try StoreFixtures()
        defer { fixtures.remove() }
        let executable = try ChildProcess.executable("CourierSQLiteWriter")
        let environment = ["COURIER_TOKEN_STORE_KEY": fixtures.key.withUnsafeBytes { Data($0) }.base64EncodedString()]
        /// The last write reported committed, by user, and its version.
        var committed: [Int: (number: Int, version: UInt64)] = [:]
        var next = 1
        var inFlightLanded = 0
        for round in 0..<5 {
            let writer = try ChildProcess(
                executable: executable,
                arguments: ["--path", fixtures.path, "--users", "\(Self.users)", "--start", "\(next)"],
                environment: environment,
                errorPath: fixtures.directory + "/writer-\(round).err"
            )
            var commits = 0
            var inFlight: Int?
            for await line in writer.lines {
                let fields = line.split(separator: " ")
                guard fields.count >= 2, let number = Int(fields[1]) else { continue }
                if fields[0] == "committed", fields.count == 3, let version = UInt64(fields[2]) {
                    committed[number % Self.users] = (number, version)
                    commits += 1
                } else if fields[0] == "begin" {
                    inFlight = number
                    // The write has begun: kill the writer in the middle of it.
                    if commits >= 20 {
                        writer.kill()
                        break
                    }
                }
            }
            await writer.waitForExit(within: .seconds(30))
            let killed = try #require(inFlight, "the writer wrote nothing: \(writer.errorOutput)")
            try #require(commits >= 20, "the writer stopped early: \(writer.errorOutput)")

            // The file is intact and every reported commit is there; the write in flight is
            // there or not, whole either way.
            #expect(try RawDatabase(fixtures.path).strings("PRAGMA integrity_check") == ["ok"])
            let store = fixtures.store()
            for user in 0..<Self.users {
                let entry = try await store.entry(for: Self.key(user))
                let stored = entry.token.flatMap { Int($0.accessToken.dropFirst("access-".count)) }
                let last = try #require(committed[user], "user \(user) was never written")
                if stored == killed, killed % Self.users == user {
                    inFlightLanded += 1
                    #expect(entry.version > last.version)
                    #expect(entry.token?.refreshToken == "refresh-\(killed)")
                } else {
                    #expect(
                        stored == last.number,
                        "user \(user): stored \(String(describing: stored)), committed \(last.number)"
                    )
                    #expect(entry.version == last.version)
                    #expect(entry.token?.refreshToken == "refresh-\(last.number)")
                }
            }
            await store.close()
            next = killed + 1
        }
        print(
            "[figures] SQLite writer killed mid-write 5 times: the write in flight had landed \(inFlightLanded) times"
        )
    }
}
