// Courier load client: `Session.send` (buffered; modes `send` and `executor`),
// `Session.stream` (mode `stream`, chunks discarded) or `Session.events` (mode `sse`, each
// response read as server-sent events, not reconnecting) with the default configuration: no
// middleware, no logger. Mode `metrics` is `send` with swift-prometheus as the session's metrics
// backend (the registry is rendered once at the end, as a scrape would). Mode `soak` is the long
// run of Soak.swift. Modes `access` and `dpop` are authenticated requests through
// `ResourceAccess` (ResourceAccessLoad.swift). One CurlTransport, its connection limit set to
// --connections, the test CA trusted, and HTTP/2 off with --http1.
import Courier
import Foundation
import HTTPTypes
import LoadClientSupport
import Prometheus

let options = LoadOptions.parse()
if options.mode == "access" || options.mode == "dpop" {
    await ResourceAccessLoad.run(options: options)
    exit(0)
}
let (origin, path) = options.originAndPath
let transport = CurlTransport(
    configuration: .init(
        maximumConnectionsPerHost: options.connections,
        trustedCertificateBundlePath: options.caFile,
        allowsHTTP2: !options.http1Only
    )
)
var configuration = Session.Configuration(baseURL: URL(string: origin)!)
let registry = PrometheusCollectorRegistry()
if options.mode == "metrics" { configuration.metricsFactory = PrometheusMetricsFactory(registry: registry) }
let session = Session(configuration: configuration, transport: transport)
if options.mode == "soak" {
    await Soak.run(session: session, path: path, options: options)
    await session.shutdown()
    await transport.shutdown()
    exit(0)
}
let streamed = options.mode == "stream"
// `executor`: the callers prefer the transport's loop thread as their task executor, so a
// completion resumes its caller on the loop thread without a hop to the cooperative pool.
let executor: (any TaskExecutor)? = options.mode == "executor" ? transport.executor : nil

// One closure per mode, the response turned into an outcome by a plain function: the closure's
// async frame, which every request in flight keeps, holds little more than the response.
func oneRequest(streamed: Bool) -> @Sendable () async -> RequestOutcome {
    if options.mode == "sse" {
        let request = ResourceRequest(path: path)
        let configuration = ServerSentEvents.Configuration(reconnects: false)
        return {
            do {
                var events = 0
                var bytes = 0
                for try await event in session.events(request, configuration: configuration) {
                    events += 1
                    bytes += event.data.utf8.count
                }
                return RequestOutcome(bytes: bytes, status: 200, events: events)
            } catch {
                return RequestOutcome(bytes: 0, status: 0, error: "\(error)")
            }
        }
    }
    if streamed {
        return {
            do {
                let response = try await session.stream(HTTPRequest(method: .get, path: path))
                var bytes = 0
                for try await chunk in response.body { bytes += chunk.count }
                return outcome(of: response, bytes: bytes)
            } catch {
                return RequestOutcome(bytes: 0, status: 0, error: "\(error)")
            }
        }
    }
    return {
        do {
            let response = try await session.send(HTTPRequest(method: .get, path: path))
            return outcome(of: response, bytes: response.data.count)
        } catch {
            return RequestOutcome(bytes: 0, status: 0, error: "\(error)")
        }
    }
}

@inline(never)
func outcome(of response: Response, bytes: Int) -> RequestOutcome {
    RequestOutcome(bytes: bytes, status: response.status.code, httpVersion: response.metrics?.httpVersion.rawValue)
}

await LoadRunner.run(
    client: options.mode == "sse" ? "courier-sse" : "courier",
    options: options,
    executor: executor,
    send: oneRequest(streamed: streamed)
)
await session.shutdown()
await transport.shutdown()
if options.mode == "metrics" {
    // A scrape: the exposition text, which must hold the request counter.
    var exposition: [UInt8] = []
    registry.emit(into: &exposition)
    let text = String(decoding: exposition, as: UTF8.self)
    guard text.contains("courier_http_client_requests") || text.contains("courier.http.client.requests") else {
        FileHandle.standardError.write(Data("metrics: no request counter in the scrape\n".utf8))
        exit(1)
    }
}
