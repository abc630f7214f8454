import Foundation
import FuzzSupport
import HTTPTypes

// A token endpoint's answer (RFC 6749 §5.1 and §5.2, RFC 8693 §2.2): any status and body
// become a token or a typed error, and a token it yields can be used (its expiry compared,
// its scope printed, stored). The first byte of the input picks the status.
@testable import Courier

/// The endpoint whose decoding is fuzzed; it never sends.
enum Fixture {
    static let endpoint = TokenEndpoint(
        server: AuthorizationServer(tokenEndpoint: URL(string: "https://127.0.0.1/token")!),
        client: OAuth2ClientCredentials(clientID: "fuzz"),
        transport: UnusedTransport()
    )
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzTokenResponse(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    guard let selector = input.bytes.first else { return 0 }
    let statuses: [HTTPResponse.Status] = [.ok, .badRequest, .unauthorized, .tooManyRequests, .serviceUnavailable]
    let status = statuses[Int(selector) % statuses.count]
    let response = Response(head: HTTPResponse(status: status), body: Response.Body(Data(input.bytes.dropFirst())))
    do {
        let token = try Fixture.endpoint.decodeToken(from: response, requestedScope: ["read"])
        _ = token.needsRenewal(at: Date(), leeway: .seconds(30))
        _ = token.hasExpired(at: Date())
        _ = token.renewalDate(leeway: .seconds(30))
        _ = token.lifetime
        _ = token.description
        _ = try JSONEncoder().encode(token)
    } catch is CourierError {
        // The expected outcome for most inputs.
    } catch {
        preconditionFailure("not a CourierError: \(error)")
    }
    return 0
}

Fuzzer.run(fuzzTokenResponse)
