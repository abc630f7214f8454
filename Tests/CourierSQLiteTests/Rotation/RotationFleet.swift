import Courier
import Crypto
import Foundation

/// Four (or any number of) CourierSQLiteKeyRotationMember processes on one store, started and
/// stopped by the test one at a time, and what they reported, gathered from their output as it
/// comes: the key-rotation test's fleet.
///
/// Used by one test task only; every wait is on the members' output, bounded by how long they
/// run (each stops by itself after its --seconds).
final class RotationFleet {
    /// The keys a member seals with and accepts: one step of a change of key.
    struct Step {
        let seal: SymmetricKey
        let accept: SymmetricKey?
    }

    /// A write a member reported committed.
    struct Commit {
        let member: String
        let readVersion: UInt64
        let version: UInt64
        let accessToken: String
    }

    /// A line of a member's output; `nil` once its output ended.
    private struct Line: Sendable {
        let member: String
        let text: String?
    }

    let path: String
    let directory: String
    let users: Int
    private let executable: String
    private let sink: AsyncStream<Line>.Continuation
    private var lines: AsyncStream<Line>.Iterator
    private var members: [ChildProcess?]
    private var names: [String?]
    private var started = 0
    /// The members told to stop, which may end.
    private var stopping: Set<String> = []
    private var stopped: Set<String> = []

    /// The committed writes, by user.
    private(set) var commits: [Int: [Commit]] = [:]
    /// How many writes each member reported committed.
    private(set) var commitCount: [String: Int] = [:]
    /// How many compare-and-swap writes lost to another member's.
    private(set) var conflicts = 0
    /// Every error a member reported, and every member that ended unasked.
    private(set) var errors: [String] = []

    init(path: String, directory: String, users: Int, slots: Int) throws {
        self.path = path
        self.directory = directory
        self.users = users
        executable = try ChildProcess.executable("CourierSQLiteKeyRotationMember")
        let (stream, sink) = AsyncStream.makeStream(of: Line.self)
        self.sink = sink
        lines = stream.makeAsyncIterator()
        members = Array(repeating: nil, count: slots)
        names = Array(repeating: nil, count: slots)
    }

    /// The total of committed writes.
    var totalCommits: Int { commitCount.values.reduce(0, +) }

    /// Starts a member in `slot` with the keys of `step`, and returns once it has committed
    /// `commits` writes.
    func start(slot: Int, step: Step, commits: Int) async throws {
        started += 1
        let name = "m\(slot)-\(started)"
        var environment = ["COURIER_TOKEN_STORE_KEY": Self.base64(step.seal)]
        if let accept = step.accept { environment["COURIER_TOKEN_STORE_ACCEPTED_KEY"] = Self.base64(accept) }
        let member = try ChildProcess(
            executable: executable,
            arguments: [
                "--path", path, "--name", name, "--users", "\(users)", "--hot", "40", "--writes", "100000",
                "--seconds", "150",
            ],
            environment: environment,
            errorPath: directory + "/\(name).err",
            withInput: true
        )
        members[slot] = member
        names[slot] = name
        let sink = self.sink
        Task {
            for await text in member.lines { sink.yield(Line(member: name, text: text)) }
            sink.yield(Line(member: name, text: nil))
        }
        try await wait { $0.commitCount[name, default: 0] >= commits }
    }

    /// Tells the member in `slot` to stop, and returns once it has reported its last write and
    /// ended.
    func stop(slot: Int) async throws {
        guard let member = members[slot], let name = names[slot] else { return }
        stopping.insert(name)
        member.closeInput(after: "stop")
        try await wait { $0.stopped.contains(name) }
        await member.waitForExit(within: .seconds(30))
        if !member.succeeded { errors.append("\(name) did not end cleanly: \(member.errorOutput)") }
        members[slot] = nil
        names[slot] = nil
    }

    /// Reads the members' output until `condition` holds.
    ///
    /// - Throws: ``RotationFleetError`` as soon as a member reports an error or ends unasked.
    func wait(until condition: (RotationFleet) -> Bool) async throws {
        while !condition(self) {
            guard let line = await lines.next() else { throw RotationFleetError(message: "no more output") }
            take(line)
            if !errors.isEmpty { throw RotationFleetError(message: errors.joined(separator: "\n")) }
        }
    }

    /// Records one line.
    private func take(_ line: Line) {
        guard let text = line.text else {
            if !stopping.contains(line.member) { errors.append("\(line.member) ended: \(errorOutput(line.member))") }
            return
        }
        let fields = text.split(separator: " ", maxSplits: 4).map(String.init)
        switch fields.first {
        case "committed":
            guard fields.count == 5, let user = Int(fields[1]), let read = UInt64(fields[2]),
                let version = UInt64(fields[3])
            else {
                errors.append("\(line.member): \(text)")
                return
            }
            commits[user, default: []].append(
                Commit(member: line.member, readVersion: read, version: version, accessToken: fields[4])
            )
            commitCount[line.member, default: 0] += 1
        case "conflict":
            conflicts += 1
        case "stopped":
            stopped.insert(line.member)
        default:
            errors.append("\(line.member): \(text)")
        }
    }

    private func errorOutput(_ name: String) -> String {
        (try? String(contentsOfFile: directory + "/\(name).err", encoding: .utf8)) ?? ""
    }

    private static func base64(_ key: SymmetricKey) -> String {
        key.withUnsafeBytes { Data($0) }.base64EncodedString()
    }
}

/// A member reported an error, or the fleet's output ended early.
struct RotationFleetError: Error, CustomStringConvertible {
    let message: String
    var description: String { message }
}
