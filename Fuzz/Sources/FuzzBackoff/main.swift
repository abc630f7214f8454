import Foundation
import FuzzSupport
import HTTPTypes

// `Retry-After` where Courier acts on it: a token endpoint's failed answer read by the endpoint
// and backed off by the broker, and a resource server's answer weighed by the retry policy.
// Whatever the status, header and body, the broker's next attempt is due within its longest
// wait and the retry policy waits no less than nothing and no more than it allows.
//
// Input: byte 0 picks the status, byte 1 the clock; then the `Retry-After` value up to the
// first newline, and the body after it.
@testable import Courier

enum Fixture {
    static let endpoint = TokenEndpoint(
        server: AuthorizationServer(tokenEndpoint: URL(string: "https://127.0.0.1/token")!),
        client: OAuth2ClientCredentials(clientID: "fuzz"),
        transport: UnusedTransport()
    )
    static let statuses: [Int] = [429, 503, 500, 502, 400, 401, 200, 504]
    /// 1970, a recent date and 2100.
    static let clocks = [
        Date(timeIntervalSince1970: 0), Date(timeIntervalSince1970: 1_800_000_000),
        Date(timeIntervalSince1970: 4_102_444_800),
    ]
    static let backoff = RenewalBackoff()
    static let policy = RetryPolicy.default
}

/// A generator that always gives the largest value, so the policy's longest wait is checked.
struct Largest: RandomNumberGenerator {
    mutating func next() -> UInt64 { .max }
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzBackoff(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    guard input.bytes.count >= 2 else { return 0 }
    let code = Fixture.statuses[Int(input.bytes[0]) % Fixture.statuses.count]
    let now = Fixture.clocks[Int(input.bytes[1]) % Fixture.clocks.count]
    let rest = input.bytes.dropFirst(2)
    let newline = rest.firstIndex(of: UInt8(ascii: "\n")) ?? rest.endIndex
    let value = String(decoding: rest[rest.startIndex..<newline], as: UTF8.self)
    let body = newline < rest.endIndex ? Data(rest[(newline + 1)...]) : Data()
    var fields = HTTPFields()
    fields[.retryAfter] = value
    let head = HTTPResponse(status: .init(code: code), headerFields: fields)

    // The resource server's answer and the retry policy.
    var largest = Largest()
    if let retry = Fixture.policy.retry(after: head, attempt: 1, now: now, using: &largest) {
        precondition(retry.wait >= .zero, "a negative wait")
        precondition(
            retry.wait <= max(Fixture.policy.maximumRetryAfter, Fixture.policy.maximumBackoff),
            "a wait longer than the policy allows: \(retry.wait)"
        )
    }

    // The token endpoint's answer and the broker's backoff.
    let failure: CourierError
    do {
        _ = try Fixture.endpoint.decodeToken(from: Response(head: head, body: Response.Body(body)), requestedScope: [])
        return 0
    } catch let error as CourierError {
        failure = error
    } catch {
        preconditionFailure("not a CourierError: \(error)")
    }
    var machine = TokenBroker.StateMachine(
        level: .device,
        leeway: .seconds(30),
        refreshLimit: RefreshLimit(),
        backoff: Fixture.backoff
    )
    guard case .start(let load, _) = machine.tokenRequested(now: now),
        case .renew = machine.loadCompleted(load.id, result: .success(nil), now: now)
    else { preconditionFailure("an empty store did not lead to a renewal") }
    switch machine.operationCompleted(load.id, result: .failure(failure), now: now, jitter: 1) {
    case .fail, .discard: break
    case .publish, .serveStale: preconditionFailure("a failed renewal with no token published one")
    }
    guard let retryAt = machine.retryAt else { return 0 }
    let wait = retryAt.timeIntervalSince(now)
    let longest = max(Fixture.backoff.maximum, Fixture.backoff.maximumRetryAfter).inSeconds
    precondition(wait.isFinite && wait >= 0 && wait <= longest + 0.001, "the next renewal waits \(wait) s")
    // Until then callers are failed at once; once it is due, a renewal starts.
    if wait > 0.001, case .start = machine.tokenRequested(now: now) {
        preconditionFailure("a renewal started while backing off")
    }
    guard case .start = machine.tokenRequested(now: retryAt.addingTimeInterval(0.001)) else {
        preconditionFailure("no renewal once the backoff was over")
    }
    return 0
}

Fuzzer.run(fuzzBackoff)
