// What DPoP (RFC 9449) costs a request, through the public API only.
//
// `ResourceAccess.anonymous.cachedToken.dpop` is `ResourceAccess.anonymous.cachedToken` with the
// device client's `dpopKey` set (a P-256 key, `DPoPKey.generate()`) and a device token
// bound to it: every request gets a fresh proof — 128 random bits for `jti`, the access token's
// SHA-256 for `ath`, the claims as JSON, base64url, one ES256 signature — and the `DPoP` field.
// The difference between the two is the price of one proof and its header; the signature is most
// of it.
import Benchmark
import Courier
import CourierTesting
import Foundation

/// Registers the DPoP benchmarks.
func registerDPoPBenchmarks() {
    Benchmark("ResourceAccess.anonymous.cachedToken.dpop") { benchmark in
        let counter = GrantCounter()
        let key = DPoPKey.generate()
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
