// Sends one secured request with debugger detection on, and says what happened.
// The debugger-detection test (Tests/CourierTests/Security) runs it with and without
// a tracer (strace).
//
//     CourierSecurityProbe <https-url> <sha256//pin> <ca-bundle.pem>
//
// Prints one line and exits: `OK <status>` (0), `REFUSED <kind>` for a CourierError (3),
// `FAILED <error>` for anything else (1), usage (2).
import Courier
import Foundation
import HTTPTypes

let arguments = CommandLine.arguments
guard arguments.count == 4, let url = URL(string: arguments[1]), let host = url.host else {
    print("usage: CourierSecurityProbe <https-url> <sha256//pin> <ca-bundle.pem>")
    exit(2)
}

do {
    let security = try SecurityConfiguration.secured(
        trust: [try TrustPolicy(host: host, pins: [try SPKIPin(arguments[2])])],
        detectsDebugger: true
    )
    let transport = CurlTransport(
        configuration: .init(proxy: .none, trustedCertificateBundlePath: arguments[3], security: security)
    )
    let session = Session(transport: transport)
    let response = try await session.send(HTTPRequest(method: .get, path: arguments[1]))
    print("OK \(response.status.code)")
    await session.shutdown()
    await transport.shutdown()
    exit(0)
} catch let error as CourierError {
    print("REFUSED \(error.kind): \(error.message)")
    exit(3)
} catch {
    print("FAILED \(error)")
    exit(1)
}
