import Foundation

/// Prints the Markdown tables of the run and the goals they are read against.
func printReport(figures: [StoreFigures], memory: [ServeResult], limits: StoreLimits) {
    func number(_ value: Int) -> String {
        let formatter = NumberFormatter()
        formatter.numberStyle = .decimal
        formatter.groupingSeparator = ","
        return formatter.string(from: NSNumber(value: value)) ?? "\(value)"
    }
    func micro(_ value: Double) -> String { String(format: "%.0f", value) }
    func seconds(_ duration: Duration) -> Double { Latencies.microseconds(duration) / 1e6 }

    print("`SQLiteTokenStore` (WAL, `synchronous = FULL`), release build, on a file in a temporary directory.")
    print("Keys `TokenStoreKey(clientID: \"bench\", level: .user, user: \"user-<n>\")`; tokens with a 40-character")
    print("access token, a 64-character refresh token, an expiry and a scope, sealed with AES-GCM.")
    print()
    print("## Fill and file size")
    print()
    print("`importEntries(_:)` in batches of \(number(limits.batch)) (one transaction and one fsync per batch; sealing")
    print("included). Sizes as the files are right after the fill, the store still open: WAL not checkpointed")
    print("away (SQLite checkpoints it every 1,000 pages; `journal_size_limit` caps what stays at 4 MiB).")
    print()
    print("| Users | Fill | Tokens/s | Database | WAL | SHM | Database + WAL | Bytes per user |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for figure in figures {
        let total = figure.databaseBytes + figure.walBytes
        print(
            "| \(number(figure.users)) | \(String(format: "%.1f s", seconds(figure.fill))) "
                + "| \(number(Int(Double(figure.users) / max(seconds(figure.fill), 1e-9)))) "
                + "| \(mebibytes(figure.databaseBytes)) | \(mebibytes(figure.walBytes)) | \(mebibytes(figure.sharedMemoryBytes)) "
                + "| \(mebibytes(total)) | \(number(Int(total) / max(figure.users, 1))) |"
        )
    }
    print()
    print("## Latency per call")
    print()
    print("Each call timed on its own with `ContinuousClock`, random users (seeded). Read: `entry(for:)` (the")
    print("reader's thread, then opening the sealed token on the caller's task). Write: `setToken(_:for:ifVersion:)`")
    print("on the version just read (the read is not timed); every write must win. The file was just written,")
    print("so its pages are in the kernel's cache: a read is not a disk read; a write waits for its fsync.")
    print()
    print("| Users | Call | Samples | p50 µs | p99 µs | max µs |")
    print("|---:|---|---:|---:|---:|---:|")
    for figure in figures {
        for (name, latencies) in [
            ("read `entry(for:)`", figure.reads), ("CAS write `setToken(_:for:ifVersion:)`", figure.writes),
        ] {
            print(
                "| \(number(figure.users)) | \(name) | \(number(latencies.count)) | \(micro(latencies.quantile(0.5))) "
                    + "| \(micro(latencies.quantile(0.99))) | \(micro(latencies.maximum)) |"
            )
        }
    }
    print()
    print("## Memory of a process serving users at once")
    print()
    print("A process of its own (`StoreBenchmark serve`): opens the store, then for each of N distinct users")
    print("`access.userClient(for: user).validToken()` on a `ResourceAccess` with `maximumUsersInMemory` = N,")
    print("keeping every client and token. The stored tokens are valid, so no token request is made (its")
    print("transport fails any request: the Requests column must be 0). Baseline: RSS with the store open and")
    print("one user served; peak: `VmHWM` (= `ru_maxrss`).")
    print()
    print(
        "| Stored users | Served at once | Baseline RSS | Peak RSS | Peak − baseline | Per user served | Time | Requests |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for result in memory {
        let served = result.number("served")
        let baseline = result.number("baselineKiB")
        let peak = result.number("peakKiB")
        let growth = peak - baseline
        print(
            "| \(number(result.number("users"))) | \(number(served)) | \(String(format: "%.1f MiB", Double(baseline) / 1024)) "
                + "| \(String(format: "%.1f MiB", Double(peak) / 1024)) | \(String(format: "%.1f MiB", Double(growth) / 1024)) "
                + "| \(String(format: "%.2f KiB", Double(growth) / Double(max(served, 1)))) | \(result.text("seconds")) s "
                + "| \(result.number("requests")) |"
        )
    }
    print()
    print("## Goals")
    print()
    if let large = figures.last {
        let read = large.reads.quantile(0.99)
        let write = large.writes.quantile(0.99)
        print("| Goal | Measured | |")
        print("|---|---:|---|")
        print(
            "| read p99 < 1 ms at \(number(large.users)) users | \(micro(read)) µs | \(read < 1_000 ? "met" : "not met") |"
        )
        print(
            "| CAS write p99 < 10 ms at \(number(large.users)) users | \(micro(write)) µs | \(write < 10_000 ? "met" : "not met") |"
        )
        if memory.count >= 3 {
            let large = memory[1].number("peakKiB")
            let small = memory[2].number("peakKiB")
            let difference = Double(large - small) / Double(max(small, 1)) * 100
            print(
                "| memory independent of stored users (same users served over both stores) "
                    + "| \(String(format: "%.1f", Double(large) / 1024)) vs \(String(format: "%.1f", Double(small) / 1024)) MiB peak "
                    + "| \(String(format: "%+.1f %%", difference)) |"
            )
        }
    }
}
