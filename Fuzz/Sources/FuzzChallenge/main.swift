import FuzzSupport
import HTTPTypes

// `WWW-Authenticate` and `Proxy-Authenticate` values: any bytes become challenges or nothing.
@testable import Courier

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzChallenge(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let input = FuzzInput(start, count)
    let challenges = AuthenticationChallenge.parse(input.text)
    precondition(challenges.count <= AuthenticationChallenge.maximumChallenges + 1, "too many challenges kept")
    for challenge in challenges {
        precondition(
            challenge.parameters.count <= AuthenticationChallenge.maximumParameters + 1,
            "too many parameters kept"
        )
        _ = challenge.description
        _ = challenge.hasScheme("bearer")
    }
    var fields = HTTPFields()
    fields.append(HTTPField(name: .wwwAuthenticate, value: input.text))
    _ = AuthenticationChallenge.asksForNewBearerToken(fields)
    do {
        _ = try AuthenticationChallenge.checkedChallenges(in: fields)
    } catch let error as CourierError {
        precondition(error.kind == .challengeFailed)
    } catch {
        preconditionFailure("not a CourierError: \(error)")
    }
    return 0
}

Fuzzer.run(fuzzChallenge)
