import Courier
import CourierFleet
import Foundation

/// One `CourierSQLiteFleetMember` process: its token events (standard error, JSON lines) and,
/// once it is done, its summary (standard output).
final class FleetMember: Sendable {
    /// Its name, in its events and summary.
    let name: String
    private let child: ChildProcess
    /// The last line of its standard output: its summary, once it is done.
    private let summaryLine = LockedBox<String?>(nil)
    /// Reads its standard output until it ends.
    private let reading: Task<Void, Never>

    /// Starts a member on the store at `storePath`, against `servers`.
    init(name: String, servers: FleetServers, storePath: String, arguments: [String], directory: String) throws {
        self.name = name
        child = try ChildProcess(
            executable: try ChildProcess.executable("CourierSQLiteFleetMember"),
            arguments: [
                "--member", name, "--oauth", servers.oauthTLS.absoluteString, "--gateway",
                servers.gatewayTLS.absoluteString, "--ca-bundle", servers.caBundle, "--pins",
                servers.pins.joined(separator: ","), "--store", "sqlite", "--store-path", storePath,
            ] + arguments,
            errorPath: directory + "/\(name).events"
        )
        let lines = child.lines
        let summaryLine = self.summaryLine
        reading = Task {
            for await line in lines { summaryLine.withLock { $0 = line } }
        }
    }

    /// The token events it logged so far (`renewed`, `adopted`, `lease`, …), in order.
    var events: [String] {
        child.errorOutput.split(separator: "\n").compactMap { line in
            guard let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any] else {
                return nil
            }
            return object["event"] as? String
        }
    }

    /// Waits until it exits (killed after `limit`) and returns its summary.
    func summary(within limit: Duration) async throws -> FleetSummary {
        await child.waitForExit(within: limit)
        await reading.value
        guard child.succeeded, let line = summaryLine.withLock({ $0 }) else {
            throw TestSetupError(message: "\(name) failed: \(child.errorOutput.suffix(2000))")
        }
        return try JSONDecoder().decode(FleetSummary.self, from: Data(line.utf8))
    }

    /// Kills it if it still runs (a test that failed early).
    func stop() { child.kill() }
}
