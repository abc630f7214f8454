// Writes tokens into an SQLite token store, one after another, until it is killed or has made
// --writes writes: the process the CourierSQLite crash test kills in the middle of a write.
//
//   COURIER_TOKEN_STORE_KEY=<32 bytes, base64> CourierSQLiteWriter --path /tmp/store.sqlite \
//       --users 8 --start 1 --writes 10000
//
// Write n (from --start on) goes to user `u<n % users>` of client `crash`, level user, with the
// access token `access-<n>` and the refresh token `refresh-<n>`, a compare-and-swap on the
// version just read. Right before the write it prints `begin <n>`, and once the write has
// returned (committed) `committed <n> <version>`, each line written at once, unbuffered.
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

do {
    var values: [String: String] = [:]
    var arguments = CommandLine.arguments.dropFirst()
    while let name = arguments.popFirst(), let value = arguments.popFirst() { values[name] = value }
    guard let path = values["--path"], let users = Int(values["--users"] ?? "8"),
        let start = Int(values["--start"] ?? "1"), let writes = Int(values["--writes"] ?? "10000")
    else {
        throw CourierError(
            .invalidParameter,
            message: "usage: CourierSQLiteWriter --path P [--users N] [--start N] [--writes N]"
        )
    }
    let store = SQLiteTokenStore(path: path, keyProvider: .environment())
    for number in start..<(start + max(1, writes)) {
        let key = TokenStoreKey(clientID: "crash", level: .user, user: "u\(number % max(1, users))")
        let token = OAuth2Token(
            accessToken: "access-\(number)",
            expiresAt: Date().addingTimeInterval(3600),
            refreshToken: "refresh-\(number)"
        )
        let entry = try await store.entry(for: key)
        report("begin \(number)")
        guard let written = try await store.setToken(token, for: key, ifVersion: entry.version) else {
            throw CourierError(.tokenStoreFailed, message: "write \(number) lost its compare-and-swap")
        }
        report("committed \(number) \(written.version)")
    }
    exit(0)
} catch {
    FileHandle.standardError.write(Data("CourierSQLiteWriter: \(error)\n".utf8))
    exit(2)
}
