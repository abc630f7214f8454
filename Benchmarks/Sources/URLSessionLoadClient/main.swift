// URLSession (FoundationNetworking, which runs on libcurl) load client: an ephemeral
// session with `httpMaximumConnectionsPerHost` = --connections, no cache, bodies in memory.
//
// FoundationNetworking on Linux has no API to trust a custom CA: `setCARootBundlePath()`
// reads `URLSessionCertificateAuthorityInfoFile` only on Android, and server-trust
// challenges are not delivered on Linux. The driver therefore runs this client in a private
// mount namespace in which the test CA is bind-mounted over libcurl's default bundle
// (/etc/ssl/certs/ca-certificates.crt). --ca is accepted and ignored.
import Foundation
import FoundationNetworking
import LoadClientSupport

let options = LoadOptions.parse()
let configuration = URLSessionConfiguration.ephemeral
configuration.httpMaximumConnectionsPerHost = options.connections
configuration.urlCache = nil
configuration.requestCachePolicy = .reloadIgnoringLocalCacheData
configuration.timeoutIntervalForRequest = 60
let session = URLSession(configuration: configuration)
let url = URL(string: options.url)!

await LoadRunner.run(client: "urlsession", options: options) {
    do {
        let (data, response) = try await session.data(from: url)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        return RequestOutcome(bytes: data.count, status: status, httpVersion: nil)
    } catch {
        return RequestOutcome(bytes: 0, status: 0, error: "\(error)")
    }
}
session.invalidateAndCancel()
