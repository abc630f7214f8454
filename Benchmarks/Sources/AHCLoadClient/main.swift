// AsyncHTTPClient 1.37.0 load client: one event-loop thread, a connection pool of
// --connections per host, HTTP/2 allowed (`.automatic`, so HTTPS negotiates h2 by ALPN),
// the test CA trusted, bodies collected in memory.
import AsyncHTTPClient
import LoadClientSupport
import NIOCore
import NIOPosix
import NIOSSL

let options = LoadOptions.parse()
let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
var configuration = HTTPClient.Configuration()
configuration.connectionPool = .init(
    idleTimeout: .seconds(300),
    concurrentHTTP1ConnectionsPerHostSoftLimit: options.connections
)
configuration.httpVersion = .automatic
if let ca = options.caFile {
    var tls = TLSConfiguration.makeClientConfiguration()
    tls.trustRoots = .file(ca)
    configuration.tlsConfiguration = tls
}
let client = HTTPClient(eventLoopGroup: group, configuration: configuration)
let url = options.url
let limit = max(options.expectBytes, 0) + 1 << 20

await LoadRunner.run(client: "ahc", options: options) {
    do {
        let request = HTTPClientRequest(url: url)
        let response = try await client.execute(request, timeout: .seconds(60))
        let body = try await response.body.collect(upTo: limit)
        let version =
            response.version.major == 2 ? "HTTP/2" : "HTTP/\(response.version.major).\(response.version.minor)"
        return RequestOutcome(bytes: body.readableBytes, status: Int(response.status.code), httpVersion: version)
    } catch {
        return RequestOutcome(bytes: 0, status: 0, error: "\(error)")
    }
}
// The client and its event loop end with the process; the measurement is already printed.
