// Micro benchmarks of Courier's in-process costs, with ordo-one/benchmark.
//
// Run: `Benchmarks/run.sh micro` (or `swift package --disable-sandbox benchmark --target CourierMicro`
// in Benchmarks/). Each benchmark reports wall clock and malloc counts per iteration (1,000
// iterations per sample); no thresholds are checked yet.
//
// The cost of one middleware is (Session.send.middleware5 − Session.send.middleware0) / 5.
// `NullTransport` answers with a response built once, so the numbers are Courier's own: the
// session's request preparation and the chain. The `.mockTransport` pair repeats the
// measurement over CourierTesting's MockTransport, which also records every request.
//
// `ResourceRequest.*` build a request with the builder and encode it into an HTTPRequest and
// body (`makeHTTPRequest()`): a GET whose parameters go to the query, and a POST whose
// parameters become a JSON body.
//
// `TokenBroker.token.validHit`: `token()` while the token is valid (the hot path of every
// authenticated request). `TokenBroker.token.expired10000`: 10,000 concurrent callers on a broker
// whose token is missing, so all of them need one; the benchmark fails (throws) unless the grant
// ran exactly once per iteration.
import Benchmark
import Courier
import CourierTesting
import Foundation
import HTTPTypes

/// A transport that answers every request with the same response, immediately.
struct NullTransport: Transport {
    let response = Response(head: HTTPResponse(status: .ok), body: Response.Body(Data(count: 1024)))

    func execute(_ request: HTTPRequest, body: RequestBody?, options: TransferOptions, control: TransferControl) async throws -> Response {
        response
    }
}

/// A middleware that only calls `next`.
struct NoOpMiddleware: Middleware {
    func intercept(_ request: HTTPRequest, body: RequestBody?, context: MiddlewareContext, next: Next) async throws -> Response {
        try await next(request, body, context)
    }
}

let baseURL = URL(string: "https://api.example.com/v1")!

/// A grant that counts its calls and answers with a token valid for an hour.
final class CountingGrant: GrantStrategy {
    private let count = Counter()

    var calls: Int { count.value }

    func obtainToken(_ context: GrantContext) async throws -> OAuth2Token {
        count.increment()
        try await Task.sleep(for: .milliseconds(1))
        return OAuth2Token(accessToken: "token-\(count.value)", expiresAt: Date().addingTimeInterval(3600))
    }
}

/// A thread-safe counter.
final class Counter: Sendable {
    private let storage = LockedCount()
    var value: Int { storage.value }
    func increment() { storage.increment() }
}

/// The smallest lock-guarded integer the benchmark needs (no dependency on Courier internals).
final class LockedCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func increment() { lock.withLock { count += 1 } }
}

struct BrokerBenchmarkError: Error, CustomStringConvertible {
    let description: String
}

/// A broker whose token endpoint is never called: the grant strategy answers directly.
func makeBroker(_ grant: CountingGrant) throws -> TokenBroker {
    let host = "auth.example.test"
    let pin = try SPKIPin(sha256: [UInt8](repeating: 7, count: 32))
    let security = try SecurityConfiguration.secured(trust: [try TrustPolicy(host: host, pins: [pin])])
    let endpoint = TokenEndpoint(
        server: AuthorizationServer(tokenEndpoint: URL(string: "https://\(host)/token")!),
        client: OAuth2ClientCredentials(clientID: "bench"),
        security: security,
        transport: NullTransport()
    )
    return TokenBroker(level: .device, endpoint: endpoint, strategy: grant)
}

func makeSession(middlewares: Int, transport: any Transport = NullTransport()) -> Session {
    Session(
        configuration: .init(baseURL: baseURL, middlewares: Array(repeating: NoOpMiddleware(), count: middlewares)),
        transport: transport
    )
}

let benchmarks: @Sendable () -> Void = {
    // Each sample runs 1,000 iterations (`scaledIterations`), so the per-sample overhead of the
    // benchmark runner (and its hop onto the cooperative pool) is amortised; the metrics are
    // reported per iteration.
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .mallocCountTotal, .throughput],
        warmupIterations: 10,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 10_000
    )

    Benchmark("Transport.execute.null") { benchmark in
        let transport = NullTransport()
        let request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com", path: "/v1/items")
        let options = TransferOptions(responseBody: .buffered(maximumBytes: 1 << 20))
        let control = TransferControl()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await transport.execute(request, body: nil, options: options, control: control))
        }
    }

    for count in [0, 1, 5] {
        Benchmark("Session.send.middleware\(count)") { benchmark in
            let session = makeSession(middlewares: count)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await session.send(HTTPRequest(method: .get, path: "/items")))
            }
        }
    }

    for count in [0, 5] {
        Benchmark("Session.send.mockTransport.middleware\(count)") { benchmark in
            let response = Response(head: HTTPResponse(status: .ok), body: Response.Body(Data(count: 1024)))
            let session = makeSession(middlewares: count, transport: MockTransport { _, _ in response })
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await session.send(HTTPRequest(method: .get, path: "/items")))
            }
        }
    }

    let parameters: [String: ParameterValue] = [
        "page": .int(2), "per_page": .int(50), "q": .string("résumé & cover letter"), "archived": .bool(false),
    ]

    Benchmark("ResourceRequest.get.query4") { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let request = ResourceRequestBuilder().path("/v1/items").method(.get).parameters(parameters)
                .header("X-Request-Source", "benchmark").build()
            blackHole(try request.makeHTTPRequest())
        }
    }

    Benchmark("ResourceRequest.post.json4") { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let request = ResourceRequestBuilder().path("/v1/items").method(.post).parameters(parameters).build()
            blackHole(try request.makeHTTPRequest())
        }
    }

    Benchmark("TokenBroker.token.validHit") { benchmark in
        let grant = CountingGrant()
        let broker = try makeBroker(grant)
        _ = try await broker.token()
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await broker.token())
        }
    }

    Benchmark(
        "TokenBroker.token.expired10000",
        configuration: .init(metrics: [.wallClock, .mallocCountTotal], scalingFactor: .one, maxDuration: .seconds(5), maxIterations: 20)
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let grant = CountingGrant()
            let broker = try makeBroker(grant)
            benchmark.startMeasurement()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10_000 { group.addTask { _ = try await broker.token() } }
                try await group.waitForAll()
            }
            benchmark.stopMeasurement()
            guard grant.calls == 1 else {
                throw BrokerBenchmarkError(description: "10,000 callers caused \(grant.calls) grants, not 1")
            }
        }
    }

    Benchmark("Session.task.middleware0") { benchmark in
        let session = makeSession(middlewares: 0)
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let task = session.task(for: HTTPRequest(method: .get, path: "/items"))
            blackHole(try await task.value)
        }
    }
}
