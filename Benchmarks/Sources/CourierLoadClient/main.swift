// Courier load client: `Session.send` (buffered; modes `send` and `executor`) or
// `Session.stream` (mode `stream`, chunks discarded) with the default configuration: no
// middleware, no logger. Mode `soak` is the long run of Soak.swift. One CurlTransport, its connection
// limit set to --connections and the test CA trusted.
import Courier
import Foundation
import HTTPTypes
import LoadClientSupport

let options = LoadOptions.parse()
let (origin, path) = options.originAndPath
let transport = CurlTransport(
    configuration: .init(
        maximumConnectionsPerHost: options.connections,
        trustedCertificateBundlePath: options.caFile
    )
)
let session = Session(configuration: .init(baseURL: URL(string: origin)!), transport: transport)
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

await LoadRunner.run(client: "courier", options: options, executor: executor) {
    do {
        let request = HTTPRequest(method: .get, path: path)
        if streamed {
            let response = try await session.stream(request)
            var bytes = 0
            for try await chunk in response.body { bytes += chunk.count }
            return RequestOutcome(
                bytes: bytes,
                status: response.status.code,
                httpVersion: response.metrics?.httpVersion.rawValue
            )
        }
        let response = try await session.send(request)
        return RequestOutcome(
            bytes: response.data.count,
            status: response.status.code,
            httpVersion: response.metrics?.httpVersion.rawValue
        )
    } catch {
        return RequestOutcome(bytes: 0, status: 0, error: "\(error)")
    }
}
await session.shutdown()
await transport.shutdown()
