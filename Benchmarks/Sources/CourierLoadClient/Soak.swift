import Courier
import Foundation
import HTTPTypes
import LoadClientSupport
import Synchronization

/// The soak run: `--requests` GETs (1,000,000 in `Benchmarks/run.sh soak`) at `--concurrency`
/// in flight on one session, bounded by `--seconds` too. Every 50,000 completed requests it
/// prints the resident memory and the open file descriptors; at the end, whether memory
/// stayed flat: after the first sample (pools and caches warm), no sample may exceed that
/// one by more than 10 % + 4 MiB.
enum Soak {
    static let sampleEvery = 50_000

    static func run(session: Session, path: String, options: LoadOptions) async {
        let counters = Counters()
        let deadline = ContinuousClock.now + .seconds(options.seconds)
        let start = ContinuousClock.now
        print("| Requests | RSS MiB | Open fds | Errors | Seconds |")
        print("|--:|--:|--:|--:|--:|")
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<options.concurrency {
                group.addTask {
                    while counters.issued.wrappingAdd(1, ordering: .relaxed).oldValue < options.requests,
                        ContinuousClock.now < deadline
                    {
                        do {
                            let response = try await session.send(HTTPRequest(method: .get, path: path))
                            if response.status.code != 200 { counters.errors.wrappingAdd(1, ordering: .relaxed) }
                        } catch {
                            counters.errors.wrappingAdd(1, ordering: .relaxed)
                        }
                        let done = counters.completed.wrappingAdd(1, ordering: .relaxed).newValue
                        if done % sampleEvery == 0 {
                            let sample = (done, residentKiB(), openFileDescriptors())
                            counters.samples.withLock { $0.append(sample) }
                            let seconds = (ContinuousClock.now - start).components.seconds
                            print(
                                "| \(done) | \(String(format: "%.1f", Double(sample.1) / 1024)) | \(sample.2) "
                                    + "| \(counters.errors.load(ordering: .relaxed)) | \(seconds) |"
                            )
                            fflush(nil)
                        }
                    }
                }
            }
        }
        let all = counters.samples.withLock { $0 }
        let total = counters.completed.load(ordering: .relaxed)
        guard let first = all.first else {
            print("\nSOAK: \(total) requests, too few for a sample: no verdict")
            return
        }
        let limit = first.1 + first.1 / 10 + 4096
        let peak = all.map(\.1).max() ?? first.1
        let flat = peak <= limit
        let fdsFlat = all.allSatisfy { $0.2 <= first.2 + 4 }
        print(
            "\nSOAK: \(total) requests, \(counters.errors.load(ordering: .relaxed)) errors; RSS after \(first.0): "
                + "\(first.1 / 1024) MiB, peak \(peak / 1024) MiB (limit \(limit / 1024) MiB): "
                + "\(flat ? "flat" : "GREW"); open fds \(fdsFlat ? "flat" : "GREW")"
        )
    }

    /// What the workers share: the request budget, the counts, the samples.
    final class Counters: Sendable {
        let issued = Atomic<Int>(0)
        let completed = Atomic<Int>(0)
        let errors = Atomic<Int>(0)
        /// (completed requests, RSS KiB, open fds) every `sampleEvery` requests.
        let samples = Mutex<[(Int, Int, Int)]>([])
    }

    /// Resident set size in KiB, from /proc/self/statm.
    static func residentKiB() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return -1 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return -1 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE))) / 1024
    }

    static func openFileDescriptors() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? -1
    }
}
