// What the HTTP cache costs a request, on a Session over NullTransport (no I/O).
//
// `Session.send.cache.off` is a session without a cache: the same chain as
// `Session.send.retry.default`, so the two show that a session without cache pays nothing.
// `Session.send.cache.miss` has a cache but the response may not be stored (`no-store`): the
// cache step's lookup and checks on every request. `Session.send.cache.hit` answers every request
// from the cache: the response is fresh for an hour, so nothing reaches the transport; compare it
// with `.off` for what a hit saves, and read its wall clock as the CPU cost of one hit.
import Benchmark
import Courier
import Foundation
import HTTPTypes

/// A transport that answers every request with the same response, cacheable or not.
struct CacheableNullTransport: Transport {
    let response: Response

    init(cacheControl: String) {
        var head = HTTPResponse(status: .ok)
        head.headerFields[.cacheControl] = cacheControl
        response = Response(head: head, body: Response.Body(Data(count: 1024)))
    }

    func execute(
        _ request: HTTPRequest,
        body: RequestBody?,
        options: TransferOptions,
        control: TransferControl
    ) async throws -> Response {
        response
    }
}

func registerCacheBenchmarks() {
    Benchmark("Session.send.cache.off") { benchmark in
        let session = Session(configuration: .init(baseURL: baseURL), transport: NullTransport())
        benchmark.startMeasurement()
        for _ in benchmark.scaledIterations {
            blackHole(try await session.send(HTTPRequest(method: .get, path: "/items")))
        }
    }

    for (name, cacheControl) in [("miss", "no-store"), ("hit", "max-age=3600")] {
        Benchmark("Session.send.cache.\(name)") { benchmark in
            var configuration = Session.Configuration(baseURL: baseURL)
            configuration.cache = HTTPCache()
            let session = Session(
                configuration: configuration,
                transport: CacheableNullTransport(cacheControl: cacheControl)
            )
            _ = try await session.send(HTTPRequest(method: .get, path: "/items"))
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations {
                blackHole(try await session.send(HTTPRequest(method: .get, path: "/items")))
            }
        }
    }
}
