import Foundation
import Testing

@testable import Courier

#if canImport(Glibc)
import Glibc
#endif

/// The example service of `Examples/CourierService`, run as a child process against the
/// authorization server and the gateway behind TLS.
///
/// Lifetime: its standard input is a pipe whose write end only this process holds (close-on-exec,
/// so no other child inherits it). The service ends when that pipe reaches end-of-file, so it
/// stops when this process exits, however it exits; ``stop()`` ends it earlier with SIGTERM.
final class ExampleServiceProcess: Sendable {
    /// Where `scripts/build-examples.sh` (run by `scripts/test.sh`) leaves the binary.
    static let executable = TestServers.repositoryRoot
        .appendingPathComponent("Examples/CourierService/.build/debug/courier-service").path

    let process: Process
    /// `http://127.0.0.1:<port>`, the port it printed on its ready line.
    let url: URL
    private let input: Pipe
    private let errorLog: String
    private let exit: ProcessExit

    var processIdentifier: Int32 { process.processIdentifier }

    private init(process: Process, url: URL, input: Pipe, errorLog: String, exit: ProcessExit) {
        self.process = process
        self.url = url
        self.input = input
        self.errorLog = errorLog
        self.exit = exit
    }

    /// Starts the service on a free port and returns once it has printed its ready line.
    static func start(_ env: AuthEnvironment) async throws -> ExampleServiceProcess {
        try #require(
            FileManager.default.isExecutableFile(atPath: executable),
            "\(executable) is missing: build it with scripts/build-examples.sh (scripts/test.sh does)"
        )
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent(
                "courier-example-\(ProcessInfo.processInfo.processIdentifier)-\(UUID().uuidString.prefix(6))"
            )
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let errorLog = directory.appendingPathComponent("stderr.log").path
        _ = FileManager.default.createFile(atPath: errorLog, contents: nil)

        let input = Pipe()
        _ = fcntl(input.fileHandleForWriting.fileDescriptor, F_SETFD, FD_CLOEXEC)
        let output = Pipe()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = [
            "--port", "0",
            "--resource-base-url", env.gateway.absoluteString,
            "--authorization-server", env.oauth.absoluteString,
            "--ca-bundle", env.caBundle,
            "--pins", env.pins.map(\.description).joined(separator: ","),
            "--user-client-id", AuthEnvironment.userClient.clientID,
            "--device-client-id", AuthEnvironment.deviceClient.clientID,
        ]
        // Secrets through the environment, as the service recommends; no proxy for loopback.
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.lowercased().hasSuffix("_proxy") }
        environment["COURIER_SERVICE_USER_CLIENT_SECRET"] = AuthEnvironment.userClient.clientSecret
        environment["COURIER_SERVICE_DEVICE_CLIENT_SECRET"] = AuthEnvironment.deviceClient.clientSecret
        process.environment = environment
        process.standardInput = input
        process.standardOutput = output
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorLog))
        let exit = ProcessExit()
        let readyLine = ReadyLine()
        process.terminationHandler = { _ in
            exit.fire()
            readyLine.deliver(nil)
        }
        try process.run()

        // The ready line, read on a thread of its own (a blocking read), or nil if the service
        // exits first.
        let reading = output.fileHandleForReading
        Thread {
            var line = Data()
            while let byte = try? reading.read(upToCount: 1), let first = byte.first, first != UInt8(ascii: "\n") {
                line.append(first)
            }
            readyLine.deliver(String(decoding: line, as: UTF8.self))
        }.start()
        let line = await readyLine.value()
        guard let line, line.hasPrefix("READY port="), let port = Int(line.dropFirst("READY port=".count)) else {
            if process.isRunning { _ = Glibc.kill(process.processIdentifier, SIGKILL) }
            await exit.wait()
            let log = (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? ""
            throw TestServersError(
                message: "courier-service did not start (\(line ?? "no ready line")):\n\(log.suffix(4000))"
            )
        }
        return ExampleServiceProcess(
            process: process,
            url: URL(string: "http://127.0.0.1:\(port)")!,
            input: input,
            errorLog: errorLog,
            exit: exit
        )
    }

    /// What the service wrote to standard error.
    var log: String { (try? String(contentsOfFile: errorLog, encoding: .utf8)) ?? "" }

    /// A field of `/proc/<pid>/status` in bytes (`VmHWM`: the peak resident set; `VmRSS`: now).
    func memory(_ field: String) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(processIdentifier)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix(field + ":") })
        let kilobytes = try #require(line.split(separator: " ").dropFirst().first.flatMap { Int($0) })
        return kilobytes * 1024
    }

    /// SIGTERM, then waits until it has exited; it must exit with status 0.
    func stop() async throws {
        _ = Glibc.kill(processIdentifier, SIGTERM)
        await exit.wait()
        #expect(
            process.terminationReason == .exit && process.terminationStatus == 0,
            "courier-service ended with \(process.terminationReason) \(process.terminationStatus):\n\(log.suffix(4000))"
        )
    }

    /// Closes its standard input, as the end of this process would, and waits until it has exited.
    func closeStandardInput() async throws {
        try input.fileHandleForWriting.close()
        await exit.wait()
    }

    /// SIGKILL, then waits until it has exited: after a failed test.
    func kill() async {
        if process.isRunning { _ = Glibc.kill(processIdentifier, SIGKILL) }
        await exit.wait()
    }
}

/// Runs `body` with a started service and a client of it, then shuts the client down and stops
/// the service with SIGTERM; kills the service when `body` throws.
func withExampleService<Result>(
    _ env: AuthEnvironment,
    _ body: (ExampleServiceProcess, Session) async throws -> Result
) async throws -> Result {
    let service = try await ExampleServiceProcess.start(env)
    let client = exampleClient(service)
    let result: Result
    do {
        result = try await body(service, client)
    } catch {
        await client.shutdown()
        await service.kill()
        throw error
    }
    await client.shutdown()
    try await service.stop()
    return result
}

/// A client of the example service: plain HTTP to its port, up to 32 connections.
func exampleClient(_ service: ExampleServiceProcess) -> Session {
    Session(
        configuration: .init(baseURL: service.url),
        transport: CurlTransport(configuration: .init(maximumConnectionsPerHost: 32, proxy: .none))
    )
}

/// The first line of standard output, or nil when the process ended first; the first delivery wins.
private final class ReadyLine: Sendable {
    private let state = LockedBox<(line: String??, waiter: CheckedContinuation<String?, Never>?)>((nil, nil))

    func deliver(_ line: String?) {
        let waiter = state.withLock { state -> CheckedContinuation<String?, Never>? in
            guard state.line == nil else { return nil }
            state.line = .some(line)
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: line)
    }

    func value() async -> String? {
        await withCheckedContinuation { continuation in
            let line = state.withLock { state -> String?? in
                if state.line == nil { state.waiter = continuation }
                return state.line
            }
            if let line { continuation.resume(returning: line) }
        }
    }
}
