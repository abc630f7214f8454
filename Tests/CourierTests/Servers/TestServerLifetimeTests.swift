import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The servers a test process starts end with it, however it ends.
///
/// A stand-in for a test process (a small Python program) starts `Tests/Servers/serve.py`
/// as the test targets do — stdin a pipe it holds and never writes to — and reads serve.py's
/// output, as the CourierOpenAPI tests do. The test records serve.py and every process below
/// it (nginx's master and worker, gunicorn's master and workers, the fault server, the SSE
/// server, the janitor) and the ports of the ready file, ends the stand-in, and waits a
/// bounded time for every one of them to be gone.
@Suite(.timeLimit(.minutes(2)))
struct TestServerLifetimeTests {
    /// How the process that started the servers ends.
    enum Ending: String, CaseIterable, Sendable, CustomTestStringConvertible {
        /// The test process is killed with SIGKILL: nothing of it runs any more.
        case killed
        /// It exits with a failure status, as after a failed expectation.
        case exited
        /// serve.py itself is killed with SIGKILL while the test process goes on.
        case supervisorKilled

        var testDescription: String {
            switch self {
            case .killed: "the test process is SIGKILLed"
            case .exited: "the test process exits with status 1"
            case .supervisorKilled: "serve.py is SIGKILLed"
            }
        }
    }

    @Test(arguments: Ending.allCases)
    func everyServerEndsWithinSecondsOfItsStarter(ending: Ending) async throws {
        let run = try await StandInTestProcess.start(services: "nginx,faults,httpbin,sse")
        defer { run.cleanUp() }

        let servers = run.serverProcesses
        // Grandchildren too: nginx's worker, gunicorn's workers.
        #expect(servers.contains { $0.parent != run.supervisor.pid }, "\(servers)")
        #expect(servers.count >= 7, "\(servers)")
        #expect(!run.ports.isEmpty)

        switch ending {
        case .killed: kill(run.standIn.processIdentifier, SIGKILL)
        case .exited: kill(run.standIn.processIdentifier, SIGTERM)  // its handler exits with status 1
        case .supervisorKilled: kill(run.supervisor.pid, SIGKILL)
        }

        let deadline = ContinuousClock.now + .seconds(8)
        var alive = servers.filter(\.isAlive)
        var listening = run.ports.filter(LoopbackSockets.accepts)
        while !(alive.isEmpty && listening.isEmpty), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            alive = alive.filter(\.isAlive)
            listening = listening.filter(LoopbackSockets.accepts)
        }
        #expect(alive.isEmpty, "still running 8 s after \(ending.testDescription): \(alive)")
        #expect(listening.isEmpty, "still accepting connections: \(listening)")
    }
}

/// One process, told apart from a later one with the same pid by its start time.
struct ProcessEntry: Sendable, Hashable, CustomStringConvertible {
    let pid: Int32
    let parent: Int32
    /// Clock ticks since boot (`/proc/PID/stat` field 22).
    let startTime: UInt64
    let command: String
    let isZombie: Bool

    /// Every process `/proc` shows.
    static func all() -> [ProcessEntry] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return names.compactMap { Int32($0) }.compactMap(entry)
    }

    /// The process with `pid`, or `nil` when there is none.
    static func entry(_ pid: Int32) -> ProcessEntry? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat") else { return nil }
        let stat = String(decoding: data, as: UTF8.self)
        // pid (comm) state ppid …; comm may hold spaces and parentheses.
        guard let open = stat.firstIndex(of: "("), let close = stat.lastIndex(of: ")") else { return nil }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        guard fields.count > 19, let parent = Int32(fields[1]), let start = UInt64(fields[19]) else { return nil }
        return ProcessEntry(
            pid: pid,
            parent: parent,
            startTime: start,
            command: String(stat[stat.index(after: open)..<close]),
            isZombie: fields[0] == "Z"
        )
    }

    /// `root`'s descendants (not `root`), from one reading of the process table.
    static func descendants(of root: Int32) -> [ProcessEntry] {
        let children = Dictionary(grouping: all(), by: \.parent)
        var found: [ProcessEntry] = []
        var pending = [root]
        while let next = pending.popLast() {
            for child in children[next] ?? [] {
                found.append(child)
                pending.append(child.pid)
            }
        }
        return found
    }

    /// Whether this process still runs (a zombie has ended; only its exit status is left).
    var isAlive: Bool {
        guard let now = Self.entry(pid) else { return false }
        return now.startTime == startTime && !now.isZombie
    }

    var description: String { "\(pid) \(command) (parent \(parent))" }
}

/// A stand-in for a test process: starts serve.py, holds its stdin, drains its output, and
/// exits with status 1 on SIGTERM.
struct StandInTestProcess {
    let standIn: Process
    /// serve.py, from the ready file.
    let supervisor: ProcessEntry
    /// serve.py and everything below it once the servers were ready.
    let serverProcesses: [ProcessEntry]
    /// Every port of the ready file.
    let ports: [Int]
    let directory: URL

    private static let program = """
        import os, signal, subprocess, sys
        signal.pthread_sigmask(signal.SIG_SETMASK, [])  # Process hands down the spawning thread's mask
        signal.signal(signal.SIGTERM, lambda *_: os._exit(1))
        serve = subprocess.Popen(sys.argv[1:], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT)
        for line in serve.stdout:
            pass
        serve.wait()
        """

    /// Starts serve.py with `--only services` under a stand-in and waits for its ready file.
    static func start(services: String) async throws -> StandInTestProcess {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("courier-lifetime-\(getpid())-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let readyPath = directory.appendingPathComponent("ready.json").path
        let standIn = Process()
        standIn.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        // serve.py's arguments as the test targets give them, with a light set of services.
        standIn.arguments = [
            "python3", "-c", program,
            "python3", TestServers.serveScript.path, "--ready-file", readyPath, "--only", services,
            "--remove-on-exit", directory.path,
        ]
        standIn.environment = ProcessInfo.processInfo.environment.merging(["PYTHONUNBUFFERED": "1"]) { $1 }
        standIn.standardInput = FileHandle.nullDevice
        standIn.standardOutput = FileHandle.nullDevice
        standIn.standardError = FileHandle.nullDevice
        try standIn.run()

        let deadline = ContinuousClock.now + .seconds(60)
        while !FileManager.default.fileExists(atPath: readyPath) {
            guard standIn.isRunning, ContinuousClock.now < deadline else {
                standIn.terminate()
                try? FileManager.default.removeItem(at: directory)
                throw TestServersError(message: "serve.py under the stand-in did not get ready (\(services))")
            }
            try await Task.sleep(for: .milliseconds(50))
        }

        struct Ready: Decodable {
            struct Service: Decodable { let ports: [String: Int] }
            let pid: Int32
            let services: [String: Service]
        }
        let ready = try JSONDecoder().decode(Ready.self, from: Data(contentsOf: URL(fileURLWithPath: readyPath)))
        guard let supervisor = ProcessEntry.entry(ready.pid) else {
            throw TestServersError(message: "serve.py (pid \(ready.pid)) is not running")
        }
        return StandInTestProcess(
            standIn: standIn,
            supervisor: supervisor,
            serverProcesses: [supervisor] + ProcessEntry.descendants(of: ready.pid).filter { !$0.isZombie },
            ports: ready.services.values.flatMap { $0.ports.values }.sorted(),
            directory: directory
        )
    }

    /// Ends whatever is left, whether or not the test passed: the stand-in and every server.
    func cleanUp() {
        if standIn.isRunning { kill(standIn.processIdentifier, SIGKILL) }
        for process in serverProcesses where process.isAlive { kill(process.pid, SIGKILL) }
        standIn.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
