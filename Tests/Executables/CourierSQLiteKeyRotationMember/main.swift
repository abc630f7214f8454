// One process of a fleet whose SQLite token store changes key while it runs: the CourierSQLite
// key-rotation test restarts four of these one at a time, with the keys of each step.
//
//   COURIER_TOKEN_STORE_KEY=<32 bytes, base64> [COURIER_TOKEN_STORE_ACCEPTED_KEY=<base64>] \
//       CourierSQLiteKeyRotationMember --path /tmp/store.sqlite --name m3 --users 10000 \
//       --hot 40 --writes 2000 --seconds 120
//
// It seals with COURIER_TOKEN_STORE_KEY and, when COURIER_TOKEN_STORE_ACCEPTED_KEY is set, also
// opens what was sealed under that key. Until its standard input ends (or it reads `stop`),
// for at most --writes writes and --seconds seconds, it picks a user — every other pick among
// the first --hot users, which every process keeps writing, so each reads what the others
// sealed — reads the entry of client `rotation`, level user, and writes a new token over it
// with a compare-and-swap on the version read. Each line is written at once:
//
//   committed <user> <version read> <version written> <access token>
//   conflict <user>                      (another process wrote the entry first)
//   error <user> <kind> <message>        (then it exits with status 2)
//   stopped <writes>                     (at the end, then it exits with status 0)
import Courier
import CourierSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// Writes `line` and a newline to standard output at once.
func report(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    var offset = 0
    while offset < bytes.count {
        let written = bytes[offset...].withUnsafeBytes { write(STDOUT_FILENO, $0.baseAddress, $0.count) }
        guard written > 0 else { exit(3) }
        offset += written
    }
}

var values: [String: String] = [:]
var arguments = CommandLine.arguments.dropFirst()
while let name = arguments.popFirst(), let value = arguments.popFirst() { values[name] = value }
guard let path = values["--path"], let name = values["--name"], let users = Int(values["--users"] ?? "10000"),
    let hot = Int(values["--hot"] ?? "40"), let writes = Int(values["--writes"] ?? "2000"),
    let seconds = Int(values["--seconds"] ?? "120"), users > 0, hot > 0
else {
    FileHandle.standardError.write(
        Data(
            "usage: CourierSQLiteKeyRotationMember --path P --name N [--users N] [--hot N] [--writes N] [--seconds N]\n"
                .utf8
        )
    )
    exit(64)
}

// Set once standard input ends or says `stop`: the loop ends after the write in progress.
let stopRequested = LockedFlag()
// Blocking reads of standard input, on a thread of their own.
Thread { [stopRequested] in
    while let line = readLine() {
        if line == "stop" { break }
    }
    stopRequested.set()
}.start()

var keys = TokenStoreKeyProvider.environment()
if ProcessInfo.processInfo.environment["COURIER_TOKEN_STORE_ACCEPTED_KEY"] != nil {
    keys = keys.accepting(.environment("COURIER_TOKEN_STORE_ACCEPTED_KEY"))
}
let store = SQLiteTokenStore(path: path, keyProvider: keys)
let deadline = ContinuousClock.now + .seconds(seconds)
var committed = 0
var attempt = 0
while committed < writes, ContinuousClock.now < deadline, !stopRequested.isSet {
    attempt += 1
    let user = attempt % 2 == 0 ? Int.random(in: 0..<min(hot, users)) : Int.random(in: 0..<users)
    let key = TokenStoreKey(clientID: "rotation", level: .user, user: String(format: "user-%05d", user))
    let access = "\(name)-\(attempt)"
    do {
        let entry = try await store.entry(for: key)
        let token = OAuth2Token(
            accessToken: access,
            expiresAt: Date().addingTimeInterval(3600),
            refreshToken: "refresh-\(access)"
        )
        if let written = try await store.setToken(token, for: key, ifVersion: entry.version) {
            committed += 1
            report("committed \(user) \(entry.version) \(written.version) \(access)")
        } else {
            report("conflict \(user)")
        }
    } catch let error as CourierError {
        report("error \(user) \(error.kind) \(error)".replacingOccurrences(of: "\n", with: " "))
        exit(2)
    } catch {
        report("error \(user) other \(error)".replacingOccurrences(of: "\n", with: " "))
        exit(2)
    }
}
report("stopped \(committed)")
exit(0)

/// A flag set from one thread and read from another.
final class LockedFlag: @unchecked Sendable {
    // `@unchecked`: `value` is only touched under `lock`.
    private let lock = NSLock()
    private var value = false
    var isSet: Bool { lock.withLock { value } }
    func set() { lock.withLock { value = true } }
}
