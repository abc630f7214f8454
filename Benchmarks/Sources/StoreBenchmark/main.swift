import Foundation

// The SQLite token store's figures (`Benchmarks/run.sh store`): fills a store with a million
// users' tokens (and a small one with ten thousand), measures a read and a compare-and-swap
// write per call, and the memory of a process serving fifty thousand users at once from each.
// Prints Markdown; run.sh puts its header above it in RESULTS-store.md.
//
//   StoreBenchmark [--users 1000000] [--small-users 10000] [--batch 10000] [--reads 20000]
//                  [--writes 2000] [--serve 50000] [--directory /tmp]
//   StoreBenchmark serve --path P --users N --count C [--seconds 600]    (the child: one RESULT line)

/// The value of `--name`, or `fallback`.
func option(_ name: String, _ fallback: Int) -> Int {
    guard let index = CommandLine.arguments.firstIndex(of: "--\(name)"), index + 1 < CommandLine.arguments.count,
        let value = Int(CommandLine.arguments[index + 1])
    else { return fallback }
    return value
}

/// The text of `--name`, or `fallback`.
func option(_ name: String, _ fallback: String) -> String {
    guard let index = CommandLine.arguments.firstIndex(of: "--\(name)"), index + 1 < CommandLine.arguments.count
    else { return fallback }
    return CommandLine.arguments[index + 1]
}

do {
    if CommandLine.arguments.dropFirst().first == "serve" {
        try await serveUsers(
            path: option("path", ""),
            users: option("users", 0),
            count: option("count", 0),
            budget: .seconds(option("seconds", 600))
        )
    } else {
        try await runStoreBenchmark(
            largeUsers: option("users", 1_000_000),
            smallUsers: option("small-users", 10_000),
            served: option("serve", 50_000),
            limits: StoreLimits(
                batch: option("batch", 10_000),
                reads: option("reads", 20_000),
                writes: option("writes", 2_000)
            ),
            parent: option("directory", NSTemporaryDirectory())
        )
    }
} catch {
    log("failed: \(error)")
    exit(1)
}
