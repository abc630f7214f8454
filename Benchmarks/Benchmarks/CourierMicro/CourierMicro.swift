// Micro benchmarks of Courier's in-process costs, with ordo-one/benchmark.
//
// Run: `Benchmarks/run.sh micro` (or `swift package --disable-sandbox benchmark --target CourierMicro`
// in Benchmarks/). Each benchmark reports wall clock and malloc counts per iteration (1,000
// iterations per sample); no thresholds are checked yet.
//
// The cost of one middleware is (Session.send.middleware5 − Session.send.middleware0) / 5.
// Every session has its retry step in the chain, with the default policy unless configured
// otherwise, so these include it. `Session.send.retry.never` and `Session.send.retry.default`
// are the same request on a NullTransport with `RetryPolicy.never` and `.default`: their
// difference is what the retry step costs a request that is not retried (the budget's lock,
// clock read and counters, and the policy's checks).
// `NullTransport` answers with a response built once, so the numbers are Courier's own: the
// session's request preparation and the chain. The `.mockTransport` pair repeats the
// measurement over CourierTesting's MockTransport, which also records every request.
//
// `ResourceRequest.*` build a request value (`ResourceRequest(path:method:parameters:headerFields:)`)
// and encode it into an HTTPRequest and body (`makeHTTPRequest()`): a GET whose parameters go
// to the query, and a POST whose parameters become a JSON body.
//
// `ResourceAccess.anonymous.*` measure what auth costs a user, through the public API only: a
// `ResourceAccess` on a MockTransport that reports a secured configuration (so every security
// check runs) and answers 200 at once, with a device grant that answers from a closure (no
// token endpoint). `ResourceAccess.anonymous.cachedToken`: `sendAnonymousRequest` while the
// device token is valid (the hot path of every authenticated request); compare it with
// `Session.send.securedMockTransport`, the same request on a plain Session over the same kind of
// mock: the difference is the bearer middleware and the broker's token lookup.
// `ResourceAccess.anonymous.expired10000`: 10,000 concurrent anonymous requests on a fresh
// ResourceAccess that has no device token yet, so all of them need one; the benchmark fails
// (throws) unless the device grant ran exactly once per iteration.
import Benchmark
import Courier
import CourierTesting
import Foundation
import HTTPTypes
import Synchronization

/// A transport that answers every request with the same response, immediately.
struct NullTransport: Transport {
    let response = Response(head: HTTPResponse(status: .ok), body: Response.Body(Data(count: 1024)))

    func execute(
        _ request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl
    ) async throws -> Response {
        response
    }
}

/// A middleware that only calls `next`.
struct NoOpMiddleware: Middleware {
    func intercept(
        _ request: HTTPRequest,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        try await next(request, body, context)
    }
}

let baseURL = URL(string: "https://api.example.com/v1")!

/// The hosts of the secured benchmarks: the resource gateway and the authorization server.
let resourceHost = "api.example.test"
let authorizationHost = "auth.example.test"

/// A secured configuration that trusts both hosts. A MockTransport never connects, so the pin
/// is never checked against a certificate; the secured checks before sending all run.
func securedConfiguration() throws -> SecurityConfiguration {
    let pin = try SPKIPin(sha256: [UInt8](repeating: 7, count: 32))
    return try .secured(trust: [
        try TrustPolicy(host: resourceHost, pins: [pin]),
        try TrustPolicy(host: authorizationHost, pins: [pin]),
    ])
}

/// A MockTransport with that configuration, answering every request with 200 at once.
func makeSecuredMock() throws -> MockTransport {
    let response = Response(head: HTTPResponse(status: .ok))
    return MockTransport(security: try securedConfiguration()) { _, _ in response }
}

/// Counts the calls of a device grant.
final class GrantCounter: Sendable {
    private let count = Atomic<Int>(0)

    var calls: Int { count.load(ordering: .relaxed) }

    /// Counts one call.
    ///
    /// - Returns: The calls so far, this one included.
    func increment() -> Int { count.add(1, ordering: .relaxed).newValue }
}

/// Resource access on `transport` whose device grant counts its calls and answers, after
/// `delay`, with a token valid for an hour — bound to `dpopKey` when one is given; the token
/// endpoint is never called.
func makeResourceAccess(
    transport: MockTransport,
    counter: GrantCounter,
    delay: Duration? = nil,
    dpopKey: DPoPKey? = nil
) throws -> ResourceAccess {
    var configuration = ResourceAccess.Configuration(
        resourceBaseURL: URL(string: "https://\(resourceHost)/v1")!,
        authorizationServer: AuthorizationServer(tokenEndpoint: URL(string: "https://\(authorizationHost)/token")!),
        transport: .init(),  // not used: the transport is given below
        userClient: OAuth2ClientCredentials(clientID: "bench-user"),
        deviceClient: OAuth2ClientCredentials(clientID: "bench-device")
    )
    configuration.deviceClient.dpopKey = dpopKey
    configuration.strategies.device = OAuth2Grant { _ in
        let call = counter.increment()
        if let delay { try await Task.sleep(for: delay) }
        var token = OAuth2Token(accessToken: "token-\(call)", expiresAt: Date().addingTimeInterval(3600))
        if let dpopKey {
            token.tokenType = .dpop
            token.keyThumbprint = dpopKey.thumbprint
        }
        return token
    }
    return try ResourceAccess(configuration: configuration, transport: transport)
}

struct AuthBenchmarkError: Error, CustomStringConvertible {
    let description: String
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

    // `Session.send.middleware0` is the null transport's allocation count with a threshold
    // (Thresholds/, `run.sh check`), per sample of 1,000 requests: nothing in it depends on
    // timing, so the tolerance is a hundredth of an allocation per request.
    var countedExactly = Benchmark.defaultConfiguration
    countedExactly.thresholds = [.mallocCountTotal: .init(absolute: [.p90: 10])]
    for count in [0, 1, 5] {
        Benchmark(
            "Session.send.middleware\(count)",
            configuration: count == 0 ? countedExactly : Benchmark.defaultConfiguration
        ) { benchmark in
            let session = makeSession(middlewares: count)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await session.send(HTTPRequest(method: .get, path: "/items")))
            }
        }
    }

    for (name, policy) in [("never", RetryPolicy.never), ("default", RetryPolicy.default)] {
        Benchmark("Session.send.retry.\(name)") { benchmark in
            var configuration = Session.Configuration(baseURL: baseURL)
            configuration.retryPolicy = policy
            let session = Session(configuration: configuration, transport: NullTransport())
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

    let requestSource = HTTPField.Name("X-Request-Source")!

    Benchmark("ResourceRequest.get.query4") { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let request = ResourceRequest(
                path: "/v1/items",
                method: .get,
                parameters: parameters,
                headerFields: [requestSource: "benchmark"]
            )
            blackHole(try request.makeHTTPRequest())
        }
    }

    Benchmark("ResourceRequest.post.json4") { benchmark in
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            let request = ResourceRequest(path: "/v1/items", method: .post, parameters: parameters)
            blackHole(try request.makeHTTPRequest())
        }
    }

    Benchmark("Session.send.securedMockTransport") { benchmark in
        let session = Session(
            configuration: .init(baseURL: URL(string: "https://\(resourceHost)/v1")!),
            transport: try makeSecuredMock()
        )
        let request = ResourceRequest(path: "/x")
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await session.send(request))
        }
        benchmark.stopMeasurement()
        await session.shutdown()
    }

    // `.dpop`: the same with the device client's DPoP key set and the token bound to it, so every
    // request also gets a fresh proof (random `jti`, the token's SHA-256 as `ath`, JSON claims,
    // base64url, one ES256 signature): the difference is the price of one proof.
    for (name, key) in [("cachedToken", nil), ("cachedToken.dpop", DPoPKey.generate())] as [(String, DPoPKey?)] {
        Benchmark("ResourceAccess.anonymous.\(name)") { benchmark in
            let counter = GrantCounter()
            let access = try makeResourceAccess(transport: try makeSecuredMock(), counter: counter, dpopKey: key)
            try await access.deviceClient.authenticate()
            let request = ResourceRequest(path: "/x")
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await access.deviceClient.sendAnonymousRequest(request))
            }
            benchmark.stopMeasurement()
            await access.shutdown()
            guard counter.calls == 1 else {
                throw AuthBenchmarkError(description: "a cached device token caused \(counter.calls) grants, not 1")
            }
        }
    }

    Benchmark(
        "ResourceAccess.anonymous.expired10000",
        configuration: .init(
            metrics: [.wallClock, .mallocCountTotal],
            scalingFactor: .one,
            maxDuration: .seconds(5),
            maxIterations: 20
        )
    ) { benchmark in
        for _ in benchmark.scaledIterations {
            let counter = GrantCounter()
            // The grant takes 1 ms, so the callers pile up behind the one renewal.
            let access = try makeResourceAccess(
                transport: try makeSecuredMock(),
                counter: counter,
                delay: .milliseconds(1)
            )
            let request = ResourceRequest(path: "/x")
            benchmark.startMeasurement()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<10_000 {
                    group.addTask { _ = try await access.deviceClient.sendAnonymousRequest(request) }
                }
                try await group.waitForAll()
            }
            benchmark.stopMeasurement()
            await access.shutdown()
            guard counter.calls == 1 else {
                throw AuthBenchmarkError(
                    description: "10,000 anonymous requests caused \(counter.calls) device grants, not 1"
                )
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

    registerManyUsersBenchmarks()
    registerObservabilityBenchmarks()
    registerCacheBenchmarks()
    registerCurlPathBenchmarks()
}
