import Synchronization

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What one request produced, as the client saw it.
public struct RequestOutcome: Sendable {
    /// Response body bytes received.
    public var bytes: Int
    /// The status code, or 0 when the request failed before a response.
    public var status: Int
    /// The HTTP version the client reports (`HTTP/1.1`, `HTTP/2`), when it reports one.
    public var httpVersion: String?
    /// Why it failed, when it threw.
    public var error: String?
    /// The server-sent events read, for a client that reads events rather than a body; its
    /// `bytes` are then the events' data bytes, and the events are checked instead.
    public var events: Int?

    /// Creates an outcome.
    public init(bytes: Int, status: Int, httpVersion: String? = nil, error: String? = nil, events: Int? = nil) {
        self.bytes = bytes
        self.status = status
        self.httpVersion = httpVersion
        self.error = error
        self.events = events
    }
}

/// Runs the bounded request loop shared by every Swift load client and prints the result.
///
/// Two phases run back to back on the same client (so connections stay warm): a warm-up
/// that is not measured, then the measured phase. Each phase starts `concurrency` worker
/// tasks; each worker sends one request at a time until the phase has issued its request
/// budget or its time is up, whichever comes first. CPU time is `getrusage(RUSAGE_SELF)`
/// user + sys across the measured phase only (all threads of the process); peak RSS is
/// `ru_maxrss` at the end (whole process lifetime).
public enum LoadRunner {
    /// Runs both phases with `send` and prints `RESULT {json}` on stdout.
    ///
    /// - Parameter executor: When set, the worker tasks prefer this task executor
    ///   (`withTaskExecutorPreference`), as a caller that runs on a transport's own thread would.
    public static func run(
        client: String,
        options: LoadOptions,
        executor: (any TaskExecutor)? = nil,
        send: @escaping @Sendable () async -> RequestOutcome
    ) async {
        let runner = PhaseRunner(options: options, executor: executor, send: send)
        _ = await runner.phase(requests: options.warmupRequests, seconds: options.warmupSeconds, recordLatency: false)
        let usageBefore = ResourceUsage.now()
        let result = await runner.phase(requests: options.requests, seconds: options.seconds, recordLatency: true)
        let usageAfter = ResourceUsage.now()
        report(
            client: client,
            options: options,
            phase: result,
            cpu: usageAfter - usageBefore,
            maxRSSKiB: usageAfter.maxRSSKiB
        )
    }

    /// Prints the one-line JSON result the driver parses.
    static func report(client: String, options: LoadOptions, phase: PhaseResult, cpu: ResourceUsage, maxRSSKiB: Int) {
        var latencies = phase.latenciesNanos
        latencies.sort()
        func percentile(_ p: Double) -> Double {
            guard !latencies.isEmpty else { return 0 }
            let index = min(latencies.count - 1, Int((Double(latencies.count) * p).rounded(.down)))
            return Double(latencies[index]) / 1000
        }
        var fields: [(String, String)] = [
            ("client", json(client)),
            ("mode", json(options.mode)),
            ("concurrency", "\(options.concurrency)"),
            ("requests", "\(phase.completed)"),
            ("errors", "\(phase.errors)"),
            ("bytes", "\(phase.bytes)"),
            ("seconds", "\(phase.seconds)"),
            ("user_us", "\(cpu.userMicros)"),
            ("sys_us", "\(cpu.systemMicros)"),
            ("maxrss_kib", "\(maxRSSKiB)"),
            ("p50_us", "\(percentile(0.5))"),
            ("p99_us", "\(percentile(0.99))"),
            ("http_version", json(phase.httpVersion ?? "n/a")),
        ]
        if let events = phase.events { fields.append(("events", "\(events)")) }
        if let error = phase.firstError { fields.append(("first_error", json(error))) }
        let body = fields.map { "\"\($0.0)\":\($0.1)" }.joined(separator: ",")
        print("RESULT {\(body)}")
        fflush(nil)
    }

    static func json(_ string: String) -> String {
        var out = "\""
        for scalar in string.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case _ where scalar.value < 0x20: out += " "
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out + "\""
    }
}

/// The totals of one phase.
struct PhaseResult: Sendable {
    var completed = 0
    var errors = 0
    var bytes = 0
    var seconds = 0.0
    var latenciesNanos: [UInt64] = []
    var httpVersion: String?
    var firstError: String?
    /// The server-sent events read, when the client reads events.
    var events: Int?

    /// Counts one request that took `nanos`, as an error when it failed or its body is not
    /// the `expect` bytes (any size when negative) — or, for a client that reads events, when it
    /// did not read the `expectEvents` events.
    @inline(never)
    mutating func record(_ outcome: RequestOutcome, nanos: UInt64, expect: Int, expectEvents: Int, latency: Bool) {
        completed += 1
        bytes += outcome.bytes
        let wrongSize: Bool
        if let read = outcome.events {
            events = (events ?? 0) + read
            wrongSize = expectEvents >= 0 && read != expectEvents
        } else {
            wrongSize = expect >= 0 && outcome.bytes != expect
        }
        if outcome.status != 200 || wrongSize || outcome.error != nil {
            errors += 1
            if firstError == nil {
                firstError =
                    outcome.error ?? "status \(outcome.status), \(outcome.bytes) bytes, \(outcome.events ?? 0) events"
            }
        }
        if httpVersion == nil { httpVersion = outcome.httpVersion }
        if latency { latenciesNanos.append(nanos) }
    }
}

/// The per-phase request budget, shared by the workers.
private final class Budget: Sendable {
    let issued = Atomic<Int>(0)
    let limit: Int
    let deadline: UInt64

    init(limit: Int, seconds: Double) {
        self.limit = limit
        self.deadline = monotonicNanos() + UInt64(seconds * 1e9)
    }

    /// Takes one request from the budget; `false` when the count or the time is used up.
    func take() -> Bool {
        guard monotonicNanos() < deadline else { return false }
        return issued.wrappingAdd(1, ordering: .relaxed).oldValue < limit
    }
}

struct PhaseRunner: Sendable {
    let options: LoadOptions
    let executor: (any TaskExecutor)?
    let send: @Sendable () async -> RequestOutcome

    func phase(requests: Int, seconds: Double, recordLatency: Bool) async -> PhaseResult {
        guard requests > 0, seconds > 0 else { return PhaseResult() }
        let budget = Budget(limit: requests, seconds: seconds)
        let start = monotonicNanos()
        let workers = min(options.concurrency, requests)
        let expect = options.expectBytes
        let expectEvents = options.expectEvents
        let send = self.send
        let executor = self.executor
        let latencyCapacity = recordLatency ? min(requests / workers + 1, 1 << 20) : 0
        var total = await withTaskGroup(of: PhaseResult.self, returning: PhaseResult.self) { group in
            for _ in 0..<workers {
                // The worker's body is a closure literal handed to `addTask` as it is: a closure
                // value converted to `addTask`'s function type is entered through thunks, each
                // an async frame every request in flight keeps. A preference only when there is
                // one: a task made with a nil preference still carries the record (≈ 1 KB each,
                // measured with 10,000 in flight).
                if let executor {
                    group.addTask(executorPreference: executor) {
                        await Self.work(
                            budget: budget,
                            send: send,
                            expect: expect,
                            expectEvents: expectEvents,
                            latencyCapacity: latencyCapacity
                        )
                    }
                } else {
                    group.addTask {
                        await Self.work(
                            budget: budget,
                            send: send,
                            expect: expect,
                            expectEvents: expectEvents,
                            latencyCapacity: latencyCapacity
                        )
                    }
                }
            }
            var total = PhaseResult()
            for await part in group {
                total.completed += part.completed
                total.errors += part.errors
                total.bytes += part.bytes
                total.latenciesNanos += part.latenciesNanos
                if total.httpVersion == nil { total.httpVersion = part.httpVersion }
                if total.firstError == nil { total.firstError = part.firstError }
                if let events = part.events { total.events = (total.events ?? 0) + events }
            }
            return total
        }
        total.seconds = Double(monotonicNanos() - start) / 1e9
        return total
    }

    /// One worker: sends requests until the budget runs out, recording latencies when
    /// `latencyCapacity` is not 0. The bookkeeping is a plain function, so the worker's async
    /// frame — which every request in flight keeps — holds only what crosses the await.
    @inline(__always)
    private static func work(
        budget: Budget,
        send: @Sendable () async -> RequestOutcome,
        expect: Int,
        expectEvents: Int,
        latencyCapacity: Int
    ) async -> PhaseResult {
        var mine = PhaseResult()
        if latencyCapacity > 0 { mine.latenciesNanos.reserveCapacity(latencyCapacity) }
        while budget.take() {
            let begin = monotonicNanos()
            let outcome = await send()
            mine.record(
                outcome,
                nanos: monotonicNanos() &- begin,
                expect: expect,
                expectEvents: expectEvents,
                latency: latencyCapacity > 0
            )
        }
        return mine
    }
}

/// CPU time and peak RSS of this process, from `getrusage(RUSAGE_SELF)`.
struct ResourceUsage {
    var userMicros: Int
    var systemMicros: Int
    var maxRSSKiB: Int

    static func now() -> ResourceUsage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return ResourceUsage(
            userMicros: Int(usage.ru_utime.tv_sec) * 1_000_000 + Int(usage.ru_utime.tv_usec),
            systemMicros: Int(usage.ru_stime.tv_sec) * 1_000_000 + Int(usage.ru_stime.tv_usec),
            maxRSSKiB: Int(usage.ru_maxrss)
        )
    }

    static func - (lhs: ResourceUsage, rhs: ResourceUsage) -> ResourceUsage {
        ResourceUsage(
            userMicros: lhs.userMicros - rhs.userMicros,
            systemMicros: lhs.systemMicros - rhs.systemMicros,
            maxRSSKiB: lhs.maxRSSKiB
        )
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
@inline(__always)
func monotonicNanos() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}
