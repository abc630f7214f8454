import Foundation

/// The whole run: both stores filled and measured, the memory of the serving processes, the
/// Markdown report on standard output; the temporary directory removed at the end, whatever
/// happened.
func runStoreBenchmark(largeUsers: Int, smallUsers: Int, served: Int, limits: StoreLimits, parent: String) async throws
{
    let directory = (parent as NSString).appendingPathComponent("courier-store-bench-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    log("working in \(directory)")
    defer { try? FileManager.default.removeItem(atPath: directory) }

    var figures: [StoreFigures] = []
    var paths: [Int: String] = [:]
    for users in [smallUsers, largeUsers] {
        let path = directory + "/tokens-\(users).sqlite"
        paths[users] = path
        log("filling and measuring \(users) users")
        figures.append(try await measureStore(path: path, users: users, limits: limits))
    }

    // The serving process over each store: the same shape over both stores, and the full
    // count over the large one.
    let smallServed = min(served, smallUsers)
    var memory: [ServeResult] = []
    for (users, count) in [(largeUsers, served), (largeUsers, smallServed), (smallUsers, smallServed)] {
        guard let path = paths[users] else { continue }
        log("serving \(count) users of \(users)")
        memory.append(try runServer(path: path, users: users, count: count))
    }
    printReport(figures: figures, memory: memory, limits: limits)
}

/// One serving process's RESULT line, parsed.
struct ServeResult {
    let fields: [String: String]

    func number(_ name: String) -> Int { Int(fields[name] ?? "") ?? -1 }
    func text(_ name: String) -> String { fields[name] ?? "?" }
}

/// Runs this executable as `serve` over `path` and returns its result; at most 15 minutes.
func runServer(path: String, users: Int, count: Int) throws -> ServeResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    process.arguments = ["serve", "--path", path, "--users", "\(users)", "--count", "\(count)", "--seconds", "600"]
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    let killer = DispatchWorkItem { if process.isRunning { process.terminate() } }
    DispatchQueue.global().asyncAfter(deadline: .now() + 900, execute: killer)
    let data = output.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    killer.cancel()
    let text = String(decoding: data, as: UTF8.self)
    guard process.terminationStatus == 0,
        let line = text.split(separator: "\n").last(where: { $0.hasPrefix("RESULT ") })
    else {
        throw BenchmarkFailure(description: "the serving process failed (status \(process.terminationStatus)): \(text)")
    }
    var fields: [String: String] = [:]
    for pair in line.dropFirst("RESULT ".count).split(separator: " ") {
        let parts = pair.split(separator: "=", maxSplits: 1)
        if parts.count == 2 { fields[String(parts[0])] = String(parts[1]) }
    }
    return ServeResult(fields: fields)
}
