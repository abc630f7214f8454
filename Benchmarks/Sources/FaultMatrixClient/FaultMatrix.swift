// The fault matrix: one request (or one burst) per kind of hostile or broken server, each
// printed as one line with the typed error Courier gave, how long it took, and the process's
// open file descriptors before and after — a fault must end in a clear error, in bounded
// time, and leave nothing open.
//
//   FaultMatrixClient --faults http://127.0.0.1:P --http http://127.0.0.1:H --https https://127.0.0.1:Q \
//       --attacker https://127.0.0.1:R --ca ca.pem
//
// Run it with `Benchmarks/run.sh faults`, which starts the test servers.
import Courier
import Foundation
import HTTPTypes

struct Arguments: Sendable {
    var faults = ""
    var http = ""
    var https = ""
    var attacker = ""
    var ca = ""

    static func parse() -> Arguments {
        var arguments = Arguments()
        var iterator = CommandLine.arguments.dropFirst().makeIterator()
        while let flag = iterator.next() {
            guard let value = iterator.next() else { fail("missing value for \(flag)") }
            switch flag {
            case "--faults": arguments.faults = value
            case "--http": arguments.http = value
            case "--https": arguments.https = value
            case "--attacker": arguments.attacker = value
            case "--ca": arguments.ca = value
            default: fail("unknown flag \(flag)")
            }
        }
        if arguments.faults.isEmpty || arguments.http.isEmpty || arguments.https.isEmpty || arguments.attacker.isEmpty
            || arguments.ca.isEmpty
        {
            fail("--faults, --http, --https, --attacker and --ca are required")
        }
        return arguments
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("FaultMatrixClient: \(message)\n".utf8))
        exit(64)
    }
}

/// The open file descriptors of this process and what each one is (`socket:[…]`, a path…).
func openFileDescriptors() -> [String: String] {
    let names = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    var result: [String: String] = [:]
    for name in names {
        result[name] = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(name)")) ?? "?"
    }
    return result
}

/// What a case ended with, in a few words: the error's kind and message, or the status.
func outcome(_ body: @Sendable () async throws -> String) async -> String {
    do {
        return try await body()
    } catch let error as CourierError {
        return "\(error.kind): \(error.message.prefix(90))"
    } catch is CancellationError {
        return "CancellationError"
    } catch {
        return "untyped \(type(of: error)): \(error)"
    }
}

/// A port nothing listens on: bound, then closed.
func closedPort() -> Int {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
    }
    _ = withUnsafeMutablePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
    }
    close(fd)
    return Int(UInt16(bigEndian: address.sin_port))
}

/// What a case gets: sessions on a transport of its own, which is shut down after the case,
/// so the descriptors counted after it show what the case left open.
struct Kit: Sendable {
    let transport: CurlTransport
    let arguments: Arguments

    /// A session with a 2 s connect timeout, a 5 s deadline, a 2 s stall timeout, no retries.
    func session(_ change: (inout Session.Configuration) -> Void = { _ in }) -> Session {
        var configuration = Session.Configuration(
            connectTimeout: .seconds(2),
            timeout: .seconds(5),
            stallTimeout: .seconds(2)
        )
        configuration.retryPolicy = .never
        change(&configuration)
        return Session(configuration: configuration, transport: transport)
    }

    /// GETs `url` on a default session and describes the outcome.
    func get(_ url: String) async -> String {
        let session = session()
        return await outcome { "\(try await session.send(HTTPRequest(url: URL(string: url)!)).status)" }
    }
}

@main
struct FaultMatrix {
    static func main() async {
        let arguments = Arguments.parse()
        let cases: [(String, @Sendable (Kit) async -> String)] = [
            ("connection refused", { await $0.get("http://127.0.0.1:\(closedPort())/") }),
            ("reset after the request", { await $0.get("\(arguments.faults)/reset") }),
            (
                "reset mid-body (Content-Length 1 MiB, 64 KiB, close; HTTP/2)",
                { await $0.get("\(arguments.https)/truncated") }
            ),
            ("truncated chunked body", { await $0.get("\(arguments.faults)/truncated-chunked") }),
            ("stalls after the head (HTTP/1.1; 2 s stall timeout)", { await $0.get("\(arguments.http)/stall") }),
            ("slow-loris head (a byte every 500 ms; 5 s deadline)", { await $0.get("\(arguments.faults)/slow-loris") }),
            (
                "never answers (5 s deadline: the stall timeout starts with the head)",
                { await $0.get("\(arguments.faults)/hang?seconds=20") }
            ),
            ("TLS: a chain from an unknown root", { await $0.get("\(arguments.attacker)/bytes/1k") }),
            ("redirect loop", { await $0.get("\(arguments.faults)/redirect-loop") }),
            (
                "gzip bomb (1 GiB of zeros in ≈ 1 MiB; 128 MiB body limit)",
                { kit in
                    let session = kit.session { $0.timeout = .seconds(60) }
                    return await outcome {
                        let response = try await session.send(
                            HTTPRequest(url: URL(string: "\(arguments.faults)/gzip-bomb")!)
                        )
                        return "\(response.status), \(response.data.count) bytes"
                    }
                }
            ),
            (
                "use after shutdown",
                { kit in
                    let session = kit.session()
                    await session.shutdown()
                    return await outcome {
                        "\(try await session.send(HTTPRequest(url: URL(string: "\(arguments.https)/bytes/1k")!)).status)"
                    }
                }
            ),
            (
                "10,000 requests in flight, cancelled at once",
                { kit in
                    let burst = kit.session {
                        $0.timeout = .seconds(60)
                        $0.stallTimeout = .seconds(60)
                    }
                    let url = URL(string: "\(arguments.faults)/hang?seconds=30")!
                    let counts = await withTaskGroup(of: String.self, returning: [String: Int].self) { group in
                        for _ in 0..<10_000 {
                            group.addTask { await outcome { "\(try await burst.send(HTTPRequest(url: url)).status)" } }
                        }
                        try? await Task.sleep(for: .seconds(2))  // let them start (bounded)
                        group.cancelAll()
                        var counts: [String: Int] = [:]
                        for await result in group { counts[result, default: 0] += 1 }
                        return counts
                    }
                    return counts.sorted { $0.value > $1.value }.map { "\($0.value) × \($0.key)" }.joined(
                        separator: "; "
                    )
                }
            ),
        ]

        // libcurl's and OpenSSL's one-time set-up holds descriptors of its own: done before counting.
        let warmUp = CurlTransport(configuration: .init(trustedCertificateBundlePath: arguments.ca))
        _ = await Kit(transport: warmUp, arguments: arguments).get("\(arguments.https)/bytes/1k")
        await warmUp.shutdown()

        print("| Case | Outcome | ms | fds before → after |")
        print("|---|---|--:|---|")
        for (name, run) in cases {
            let before = openFileDescriptors()
            let transport = CurlTransport(configuration: .init(trustedCertificateBundlePath: arguments.ca))
            let start = ContinuousClock.now
            let result = await run(Kit(transport: transport, arguments: arguments))
            let elapsed = ContinuousClock.now - start
            await transport.shutdown()
            let after = openFileDescriptors()
            let millis = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            let added = after.filter { before[$0.key] != $0.value }.map { "\($0.key): \($0.value)" }.sorted()
            let fds =
                "\(before.count) → \(after.count)" + (added.isEmpty ? "" : " (new: \(added.joined(separator: ", ")))")
            print("| \(name) | \(result.replacingOccurrences(of: "|", with: "/")) | \(millis) | \(fds) |")
            fflush(nil)
        }
    }
}
