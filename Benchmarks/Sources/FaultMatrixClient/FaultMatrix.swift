// The fault matrix: one request (or one burst) per kind of hostile or broken server, each
// printed as one line with the typed error Courier gave, how long it took, and the process's
// open file descriptors before and after — a fault must end in a clear error, in bounded
// time, and leave nothing open.
//
//   FaultMatrixClient --faults http://127.0.0.1:P --https https://127.0.0.1:Q \
//       --attacker https://127.0.0.1:R --ca ca.pem
//
// Run it with `Benchmarks/run.sh faults`, which starts the test servers.
import Courier
import Foundation
import HTTPTypes

struct Arguments {
    var faults = ""
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
            case "--https": arguments.https = value
            case "--attacker": arguments.attacker = value
            case "--ca": arguments.ca = value
            default: fail("unknown flag \(flag)")
            }
        }
        if arguments.faults.isEmpty || arguments.https.isEmpty || arguments.attacker.isEmpty || arguments.ca.isEmpty {
            fail("--faults, --https, --attacker and --ca are required")
        }
        return arguments
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("FaultMatrixClient: \(message)\n".utf8))
        exit(64)
    }
}

/// The open file descriptors of this process.
func openFileDescriptors() -> Int {
    (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
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

@main
struct FaultMatrix {
    static func main() async {
        let arguments = Arguments.parse()
        let transport = CurlTransport(configuration: .init(trustedCertificateBundlePath: arguments.ca))
        @Sendable func session(_ change: (inout Session.Configuration) -> Void = { _ in }) -> Session {
            var configuration = Session.Configuration(
                connectTimeout: .seconds(2),
                timeout: .seconds(5),
                stallTimeout: .seconds(2)
            )
            configuration.retryPolicy = .never
            change(&configuration)
            return Session(configuration: configuration, transport: transport)
        }
        @Sendable func get(_ url: String) -> HTTPRequest { HTTPRequest(url: URL(string: url)!) }

        let plain = session()
        let cases: [(String, @Sendable () async -> String)] = [
            (
                "connection refused",
                {
                    await outcome { "\(try await plain.send(get("http://127.0.0.1:\(closedPort())/")).status)" }
                }
            ),
            (
                "reset after the request",
                {
                    await outcome { "\(try await plain.send(get("\(arguments.faults)/reset")).status)" }
                }
            ),
            (
                "reset mid-body (Content-Length 1 MiB, 64 KiB sent)",
                {
                    await outcome { "\(try await plain.send(get("\(arguments.https)/truncated")).status)" }
                }
            ),
            (
                "truncated chunked body",
                {
                    await outcome { "\(try await plain.send(get("\(arguments.faults)/truncated-chunked")).status)" }
                }
            ),
            (
                "slow-loris head (a byte every 500 ms; 5 s deadline)",
                {
                    await outcome { "\(try await plain.send(get("\(arguments.faults)/slow-loris")).status)" }
                }
            ),
            (
                "never answers (2 s stall timeout)",
                {
                    await outcome { "\(try await plain.send(get("\(arguments.faults)/hang?seconds=20")).status)" }
                }
            ),
            (
                "TLS: a certificate from an unknown root",
                {
                    await outcome { "\(try await plain.send(get("\(arguments.attacker)/bytes/1k")).status)" }
                }
            ),
            (
                "redirect loop",
                {
                    await outcome { "\(try await plain.send(get("\(arguments.faults)/redirect-loop")).status)" }
                }
            ),
            (
                "gzip bomb (1 GiB of zeros in 1 MiB; 128 MiB body limit)",
                {
                    await outcome {
                        let response = try await session { $0.timeout = .seconds(60) }.send(
                            get("\(arguments.faults)/gzip-bomb")
                        )
                        return "\(response.status), \(response.data.count) bytes"
                    }
                }
            ),
            (
                "use after shutdown",
                {
                    await outcome {
                        let closing = session()
                        await closing.shutdown()
                        return "\(try await closing.send(get("\(arguments.https)/bytes/1k")).status)"
                    }
                }
            ),
            (
                "10,000 requests in flight, cancelled at once",
                {
                    let burst = session {
                        $0.timeout = .seconds(60)
                        $0.stallTimeout = .seconds(60)
                    }
                    let results = await withTaskGroup(of: String.self, returning: [String: Int].self) { group in
                        for _ in 0..<10_000 {
                            group.addTask {
                                await outcome {
                                    "\(try await burst.send(get("\(arguments.faults)/hang?seconds=30")).status)"
                                }
                            }
                        }
                        try? await Task.sleep(for: .seconds(2))  // let them reach the server (bounded)
                        group.cancelAll()
                        var counts: [String: Int] = [:]
                        for await result in group { counts[result, default: 0] += 1 }
                        return counts
                    }
                    return results.sorted { $0.value > $1.value }.map { "\($0.value) × \($0.key)" }.joined(
                        separator: "; "
                    )
                }
            ),
        ]

        print("| Case | Outcome | ms | fds before → after |")
        print("|---|---|--:|---|")
        for (name, run) in cases {
            let before = openFileDescriptors()
            let start = ContinuousClock.now
            let result = await run()
            let elapsed = ContinuousClock.now - start
            // Connections a failed transfer leaves to the pool close as the loop notices; give it a moment.
            var after = openFileDescriptors()
            for _ in 0..<20 where after > before {
                try? await Task.sleep(for: .milliseconds(100))
                after = openFileDescriptors()
            }
            let millis = elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000
            print("| \(name) | \(result.replacingOccurrences(of: "|", with: "/")) | \(millis) | \(before) → \(after) |")
            fflush(nil)
        }
        await transport.shutdown()
    }
}
