import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// A session with an ``HTTPCache`` against the conformance server's `/cached` route, over
/// HTTP/1.1 and HTTP/2: what the caller gets (``Response/cacheStatus``, body) and what the
/// server saw (its request counts).
@Suite(.timeLimit(.minutes(2)))
struct CacheIntegrationTests {
    /// What `/cached_count` reports for a key.
    struct Counts: Decodable, Equatable {
        let requests: Int
        let conditional: Int
    }

    /// A `/cached` resource of its own key, with the given response fields.
    struct Resource {
        let key = UUID().uuidString
        var query: [String: String]

        init(_ query: [String: String]) { self.query = query }

        var path: String {
            var components = URLComponents()
            components.path = "/cached"
            components.queryItems =
                [URLQueryItem(name: "key", value: key)]
                + query.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) }
            return components.percentEncodedPath + "?" + (components.percentEncodedQuery ?? "")
        }
    }

    static func get(
        _ client: ConformanceClient,
        _ resource: Resource,
        _ fields: HTTPFields = [:]
    ) async throws -> Response {
        try await client.session.send(HTTPRequest(method: .get, path: resource.path, headerFields: fields))
    }

    static func counts(_ client: ConformanceClient, _ resource: Resource) async throws -> Counts {
        let response = try await client.send(.get, "/cached_count?key=\(resource.key)")
        return try JSONDecoder().decode(Counts.self, from: response.data)
    }

    static func withCache<T>(
        _ wire: ConformanceWire,
        _ cache: HTTPCache = HTTPCache(),
        _ body: (ConformanceClient) async throws -> T
    ) async throws -> T {
        try await withConformanceClient(wire, configure: { $0.cache = cache }, body)
    }

    @Test(arguments: ConformanceWire.allCases)
    func aFreshResponseIsServedWithoutTheNetwork(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=60"])
            let first = try await Self.get(client, resource)
            #expect(first.cacheStatus == .network)
            #expect(first.data.text == "v1")
            let second = try await Self.get(client, resource)
            #expect(second.cacheStatus == .hit)
            #expect(second.data.text == "v1")
            #expect(try await Self.counts(client, resource) == Counts(requests: 1, conditional: 0))
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func aStaleResponseIsRevalidatedWithItsETag(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=0", "etag": "\"e1\""])
            _ = try await Self.get(client, resource)
            let second = try await Self.get(client, resource)
            #expect(second.cacheStatus == .revalidated)
            #expect(second.status == .ok)
            #expect(second.data.text == "v1")
            #expect(second.metrics?.httpVersion == wire.httpVersion)
            #expect(try await Self.counts(client, resource) == Counts(requests: 2, conditional: 1))
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func aStaleResponseIsRevalidatedWithItsLastModified(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "no-cache", "lm": "Sun, 06 Nov 1994 08:49:37 GMT"])
            _ = try await Self.get(client, resource)
            let second = try await Self.get(client, resource)
            #expect(second.cacheStatus == .revalidated)
            #expect(second.data.text == "v1")
            #expect(try await Self.counts(client, resource) == Counts(requests: 2, conditional: 1))
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func noStoreAndNoCache(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let noStore = Resource(["cc": "no-store, max-age=60", "etag": "\"n\""])
            _ = try await Self.get(client, noStore)
            let again = try await Self.get(client, noStore)
            #expect(again.cacheStatus == .network)
            #expect(try await Self.counts(client, noStore) == Counts(requests: 2, conditional: 0))

            let noCache = Resource(["cc": "no-cache, max-age=60", "etag": "\"c\""])
            _ = try await Self.get(client, noCache)
            #expect(try await Self.get(client, noCache).cacheStatus == .revalidated)
            #expect(try await Self.counts(client, noCache) == Counts(requests: 2, conditional: 1))

            let fresh = Resource(["cc": "max-age=60"])
            _ = try await Self.get(client, fresh)
            let refused = try await Self.get(client, fresh, [.cacheControl: "no-store"])
            #expect(refused.cacheStatus == .network)
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func privateResponsesStayWithTheirCredential(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "private, max-age=60"])
            _ = try await Self.get(client, resource)
            #expect(try await Self.get(client, resource).cacheStatus == .network, "anonymous: not stored")

            let alice: HTTPFields = [.authorization: "Bearer alice"]
            let bob: HTTPFields = [.authorization: "Bearer bob"]
            let forAlice = try await Self.get(client, resource, alice)
            #expect(forAlice.cacheStatus == .network)
            let aliceAgain = try await Self.get(client, resource, alice)
            #expect(aliceAgain.cacheStatus == .hit)
            #expect(aliceAgain.data == forAlice.data)
            let forBob = try await Self.get(client, resource, bob)
            #expect(forBob.cacheStatus == .network, "bob never sees alice's entry")
            #expect(forBob.data != forAlice.data)
            #expect(try await Self.get(client, resource).cacheStatus == .network, "nor does anyone else")
            #expect(try await Self.counts(client, resource).requests == 5)
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func theSharedPartitionHoldsOnlyWhatASharedCacheMay(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let cookie = Resource(["cc": "max-age=60", "private_set_cookie": "1"])
            _ = try await Self.get(client, cookie)
            #expect(try await Self.get(client, cookie).cacheStatus == .network)

            let publicResource = Resource(["cc": "public, max-age=60"])
            _ = try await Self.get(client, publicResource, [.authorization: "Bearer alice"])
            #expect(try await Self.get(client, publicResource, [.authorization: "Bearer alice"]).cacheStatus == .hit)
            #expect(try await Self.get(client, publicResource).cacheStatus == .network, "a credential's entry")
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func mustRevalidateRefusesStale(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let strict = Resource(["cc": "max-age=0, must-revalidate", "etag": "\"m\""])
            _ = try await Self.get(client, strict)
            let response = try await Self.get(client, strict, [.cacheControl: "max-stale=600"])
            #expect(response.cacheStatus == .revalidated)

            let lax = Resource(["cc": "max-age=0", "etag": "\"l\""])
            _ = try await Self.get(client, lax)
            #expect(try await Self.get(client, lax, [.cacheControl: "max-stale=600"]).cacheStatus == .stale)
            #expect(try await Self.counts(client, lax).requests == 1)
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func staleWhileRevalidateServesAtOnceAndValidatesInTheBackground(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=0, stale-while-revalidate=600", "etag": "\"w\""])
            _ = try await Self.get(client, resource)
            let stale = try await Self.get(client, resource)
            #expect(stale.cacheStatus == .stale)
            #expect(stale.data.text == "v1")
            // The background validation reaches the server once; each poll is a request of its own.
            var counts = try await Self.counts(client, resource)
            for _ in 0..<500 where counts.conditional == 0 {
                try await Task.sleep(for: .milliseconds(10))
                counts = try await Self.counts(client, resource)
            }
            #expect(counts == Counts(requests: 2, conditional: 1))
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func staleIfErrorStandsInForAServerError(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=0, stale-if-error=600", "etag": "\"f\"", "error": "503"])
            _ = try await Self.get(client, resource)
            let response = try await Self.get(client, resource)
            #expect(response.cacheStatus == .stale)
            #expect(response.status == .ok)
            #expect(response.data.text == "v1")

            let plain = Resource(["cc": "max-age=0", "etag": "\"p\"", "error": "503"])
            _ = try await Self.get(client, plain)
            let failed = try await Self.get(client, plain)
            #expect(failed.status == .serviceUnavailable)
            #expect(failed.cacheStatus == .network)
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func varyKeepsAVariantPerFieldValue(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=60", "vary": "X-Variant"])
            let name = HTTPField.Name("X-Variant")!
            #expect(try await Self.get(client, resource, [name: "a"]).data.text == "v1:a")
            let other = try await Self.get(client, resource, [name: "b"])
            #expect(other.cacheStatus == .network)
            #expect(other.data.text == "v2:b")
            let first = try await Self.get(client, resource, [name: " a "])
            #expect(first.cacheStatus == .hit)
            #expect(first.data.text == "v1:a")
            #expect(try await Self.get(client, resource).cacheStatus == .network, "no field is another variant")

            let star = Resource(["cc": "max-age=60", "vary": "*"])
            _ = try await Self.get(client, star)
            #expect(try await Self.get(client, star).cacheStatus == .network)
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func onlyIfCachedNeverGoesToTheNetwork(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=60"])
            let missing = try await Self.get(client, resource, [.cacheControl: "only-if-cached"])
            #expect(missing.status == .gatewayTimeout)
            #expect(try await Self.counts(client, resource).requests == 0)
            _ = try await Self.get(client, resource)
            #expect(try await Self.get(client, resource, [.cacheControl: "only-if-cached"]).cacheStatus == .hit)
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func anUnsafeRequestInvalidates(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=60"])
            _ = try await Self.get(client, resource, [.authorization: "Bearer alice"])
            _ = try await Self.get(client, resource)
            let post = try await client.session.send(
                HTTPRequest(method: .post, path: resource.path),
                body: .data(Data("x".utf8))
            )
            #expect(post.status == .ok)
            #expect(try await Self.get(client, resource).cacheStatus == .network)
            #expect(try await Self.get(client, resource, [.authorization: "Bearer alice"]).cacheStatus == .network)
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func theCallersOwnConditionalPassesThrough(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=60", "etag": "\"o\""])
            _ = try await Self.get(client, resource)
            let response = try await Self.get(client, resource, [.ifNoneMatch: "\"o\""])
            #expect(response.status == .notModified)
            #expect(response.cacheStatus == .network)
            #expect(try await Self.counts(client, resource) == Counts(requests: 2, conditional: 1))
        }
    }

    @Test(arguments: ConformanceWire.allCases)
    func aStreamedRequestGetsAStoredBody(_ wire: ConformanceWire) async throws {
        try await Self.withCache(wire) { client in
            let resource = Resource(["cc": "max-age=60"])
            _ = try await Self.get(client, resource)
            let response = try await client.session.stream(HTTPRequest(method: .get, path: resource.path))
            #expect(response.cacheStatus == .hit)
            var body = Data()
            for try await chunk in response.body { body.append(chunk) }
            #expect(body.text == "v1")
        }
    }

    /// 1,000 callers ask at once for one stale response: one conditional request reaches the
    /// server, and every caller gets the stored body, revalidated. The server holds the
    /// conditional request until every caller waits for it.
    @Test(arguments: ConformanceWire.allCases)
    func aStormOfValidationsIsOneRequest(_ wire: ConformanceWire) async throws {
        let cache = HTTPCache()
        try await Self.withCache(wire, cache) { client in
            let resource = Resource(["cc": "max-age=0", "etag": "\"s\"", "hold": "1"])
            _ = try await Self.get(client, resource)
            let callers = 1000
            try await withThrowingTaskGroup(of: Response.self) { group in
                for _ in 0..<callers {
                    group.addTask { try await Self.get(client, resource) }
                }
                try await Self.waitForWaiters(cache, callers)
                _ = try await client.send(.get, "/cached_release?key=\(resource.key)")
                var answered = 0
                for try await response in group {
                    answered += 1
                    #expect(response.cacheStatus == .revalidated)
                    #expect(response.data.text == "v1")
                }
                #expect(answered == callers)
            }
            #expect(try await Self.counts(client, resource) == Counts(requests: 2, conditional: 1))
        }
    }

    /// A caller that stops waiting for a shared validation gets `CancellationError`; the
    /// validation goes on for the others.
    @Test(arguments: ConformanceWire.allCases)
    func aCancelledWaiterLeavesTheValidationToTheOthers(_ wire: ConformanceWire) async throws {
        let cache = HTTPCache()
        try await Self.withCache(wire, cache) { client in
            let resource = Resource(["cc": "max-age=0", "etag": "\"c\"", "hold": "1"])
            _ = try await Self.get(client, resource)
            let first = Task { try await Self.get(client, resource) }
            let others = (0..<9).map { _ in Task { try await Self.get(client, resource) } }
            try await Self.waitForWaiters(cache, 10)
            first.cancel()
            await #expect(throws: CancellationError.self) { try await first.value }
            _ = try await client.send(.get, "/cached_release?key=\(resource.key)")
            for other in others {
                let response = try await other.value
                #expect(response.cacheStatus == .revalidated)
                #expect(response.data.text == "v1")
            }
            #expect(try await Self.counts(client, resource) == Counts(requests: 2, conditional: 1))
        }
    }

    /// A caller whose deadline comes before that of the caller that started a shared
    /// validation stops waiting at its own, timed out; the validation goes on for the others.
    @Test(arguments: ConformanceWire.allCases)
    func aWaiterStopsAtItsOwnDeadline(_ wire: ConformanceWire) async throws {
        let cache = HTTPCache()
        try await Self.withCache(wire, cache) { client in
            let resource = Resource(["cc": "max-age=0", "etag": "\"d\"", "hold": "1"])
            _ = try await Self.get(client, resource)
            let first = Task { try await Self.get(client, resource) }
            try await Self.waitForWaiters(cache, 1)
            let request = HTTPRequest(method: .get, path: resource.path)
            await #expect(throws: CourierError(.timedOut)) {
                _ = try await client.session.send(request, deadline: .now + .milliseconds(300))
            }
            #expect(cache.revalidationWaiters == 1)
            _ = try await client.send(.get, "/cached_release?key=\(resource.key)")
            #expect(try await first.value.cacheStatus == .revalidated)
            #expect(try await Self.counts(client, resource) == Counts(requests: 2, conditional: 1))
        }
    }

    /// Waits, at most 30 s, until `count` callers wait for a validation of `cache`.
    static func waitForWaiters(_ cache: HTTPCache, _ count: Int) async throws {
        for _ in 0..<3000 where cache.revalidationWaiters < count {
            try await Task.sleep(for: .milliseconds(10))
        }
        try #require(cache.revalidationWaiters == count)
    }
}
