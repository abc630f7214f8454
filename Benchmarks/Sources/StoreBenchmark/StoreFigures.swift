import Courier
import CourierSQLite
import Foundation

/// What one store size measured: the fill, the file, and the latencies of a read and of a
/// compare-and-swap write.
struct StoreFigures {
    var users = 0
    var fill: Duration = .zero
    var databaseBytes: UInt64 = 0
    var walBytes: UInt64 = 0
    var sharedMemoryBytes: UInt64 = 0
    var reads = Latencies()
    var writes = Latencies()
}

/// The limits of one store's measurement: counts, and a time budget for each loop.
struct StoreLimits {
    var batch = 10_000
    var reads = 20_000
    var writes = 2_000
    var fillBudget = Duration.seconds(1_800)
    var readBudget = Duration.seconds(120)
    var writeBudget = Duration.seconds(300)
}

/// Fills a new store at `path` with `users` users' tokens through `importEntries(_:)`, batch
/// by batch, then measures `entry(for:)` and `setToken(_:for:ifVersion:)` of random users.
func measureStore(path: String, users: Int, limits: StoreLimits) async throws -> StoreFigures {
    let clock = ContinuousClock()
    var figures = StoreFigures()
    var generator = SplitMix64(state: UInt64(users))
    let store = SQLiteTokenStore(path: path)

    // The fill: one transaction (one fsync) per batch; sealing is part of the import's cost.
    let fillStart = clock.now
    var filled = 0
    while filled < users {
        guard clock.now - fillStart < limits.fillBudget else {
            throw BenchmarkFailure(description: "the fill of \(users) users ran out of time at \(filled)")
        }
        let range = filled..<min(filled + limits.batch, users)
        let batch = range.map { (key: BenchTokens.key($0), token: BenchTokens.token(using: &generator)) }
        let copied = try await store.importEntries(batch)
        guard copied == batch.count else {
            throw BenchmarkFailure(description: "a batch copied \(copied) of \(batch.count) tokens")
        }
        filled = range.upperBound
        if filled % 100_000 == 0 || filled == users {
            log("\(users) users: \(filled) filled after \(clock.now - fillStart)")
        }
    }
    figures.users = filled
    figures.fill = clock.now - fillStart
    figures.databaseBytes = fileSize(path)
    figures.walBytes = fileSize(path + "-wal")
    figures.sharedMemoryBytes = fileSize(path + "-shm")

    // Reads: a warm-up (opens the reader's connection), then one timed call per sample.
    for _ in 0..<200 { _ = try await store.entry(for: BenchTokens.key(Int.random(in: 0..<users, using: &generator))) }
    let readStart = clock.now
    while figures.reads.count < limits.reads, clock.now - readStart < limits.readBudget {
        let key = BenchTokens.key(Int.random(in: 0..<users, using: &generator))
        let start = clock.now
        let entry = try await store.entry(for: key)
        figures.reads.record(clock.now - start)
        guard entry.token != nil else { throw BenchmarkFailure(description: "no token for \(key)") }
    }

    // Compare-and-swap writes on the version just read: only the write is timed.
    let writeStart = clock.now
    while figures.writes.count < limits.writes, clock.now - writeStart < limits.writeBudget {
        let key = BenchTokens.key(Int.random(in: 0..<users, using: &generator))
        let entry = try await store.entry(for: key)
        let token = BenchTokens.token(using: &generator)
        let start = clock.now
        let written = try await store.setToken(token, for: key, ifVersion: entry.version)
        figures.writes.record(clock.now - start)
        guard written != nil else { throw BenchmarkFailure(description: "a compare-and-swap lost on \(key)") }
    }
    return figures
}

/// A line of progress on standard error.
func log(_ message: String) {
    FileHandle.standardError.write(Data("StoreBenchmark: \(message)\n".utf8))
}
