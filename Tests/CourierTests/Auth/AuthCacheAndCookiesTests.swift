import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The HTTP cache and the cookie jars of a ResourceAccess against the real gateway: every
/// response and every cookie stays with the user (or the device) whose credential obtained it.
/// Part of the serialized integration suite: token lifetimes are server-wide.
extension AuthIntegrationTests {
    /// The gateway's private, per-user cached route.
    static func cached(maxAge: Int = 60) -> ResourceRequest {
        ResourceRequest(path: "/api/user/cached?max_age=\(maxAge)")
    }

    /// A plain session to the gateway's loopback-only routes.
    func gatewayAdmin() -> Session {
        Session(
            configuration: .init(baseURL: env.gatewayPlain),
            transport: CurlTransport(configuration: .init(proxy: .none))
        )
    }

    /// Forgets the gateway's per-user counts and changes every user's ETag.
    func resetGatewayCache() async throws {
        let session = gatewayAdmin()
        let response = try await session.send(HTTPRequest(method: .post, path: "/admin/cache-reset"))
        await session.shutdown()
        #expect(response.statusCode == 200)
    }

    /// What the gateway counted per user on the cached route: requests, and 304s among them.
    func gatewayCacheCounts() async throws -> [String: (requests: Int, notModified: Int)] {
        let session = gatewayAdmin()
        let response = try await session.send(HTTPRequest(method: .get, path: "/api/user/cached/stats"))
        await session.shutdown()
        let object = try #require(try JSONSerialization.jsonObject(with: response.data) as? [String: [String: Int]])
        return object.mapValues { ($0["requests"] ?? 0, $0["not_modified"] ?? 0) }
    }

    @Test func twoHundredUsersEachSeeTheirOwnCachedResponse() async throws {
        let cache = HTTPCache()
        let access = try access { $0.cache = cache }
        try await resetGatewayCache()
        let numbers = Array(1...200)
        @Sendable func key(_ n: Int) -> String { "cache-\(n)" }
        @Sendable func name(_ n: Int) -> String { "user-\(n)" }
        _ = try await concurrently(numbers) { n in
            try await access.userClient(for: key(n)).authenticate(username: name(n), password: "password")
        }

        // Twice for every user at once: the first from the gateway, the second from the cache,
        // each with the user's own subject.
        for round in 1...2 {
            let answers = try await concurrently(numbers) { n -> String in
                let response = try await access.userClient(for: key(n)).sendAuthenticatedRequest(Self.cached())
                let username = try json(response)["username"] as? String ?? "none"
                return "\(username) \(response.cacheStatus)"
            }
            let expected: Response.CacheStatus = round == 1 ? .network : .hit
            #expect(numbers.allSatisfy { answers[$0] == "\(name($0)) \(expected)" })
        }
        var counts = try await gatewayCacheCounts()
        #expect(numbers.allSatisfy { counts[name($0)]?.requests == 1 })

        // One user logs out: their entries go, every other user's stay.
        let stored = cache.storedBytes
        await access.userClient(for: key(1)).logout()
        #expect(cache.storedBytes < stored)
        #expect(cache.storedBytes > stored * 9 / 10)
        try await access.userClient(for: key(1)).authenticate(username: name(1), password: "password")
        let again = try await access.userClient(for: key(1)).sendAuthenticatedRequest(Self.cached())
        #expect(again.cacheStatus == .network)
        let other = try await access.userClient(for: key(2)).sendAuthenticatedRequest(Self.cached())
        #expect(other.cacheStatus == .hit)
        #expect(try json(other)["username"] as? String == name(2))
        counts = try await gatewayCacheCounts()
        #expect(counts[name(1)]?.requests == 2)
        #expect(counts[name(2)]?.requests == 1)
        await access.shutdown()
    }

    @Test func aRenewedTokenKeepsTheUsersCacheEntries() async throws {
        let access = try access { $0.cache = HTTPCache() }
        try await resetGatewayCache()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        let first = try await access.userClient.sendAuthenticatedRequest(Self.cached(maxAge: 0))
        #expect(first.cacheStatus == .network)
        let grants = try await grantDelta {
            try await admin.expireAll()
            // Stale at once (max-age=0): revalidated with the stored ETag, which needs the
            // user's token, renewed now; the 304 confirms the entry the old token obtained.
            let second = try await access.userClient.sendAuthenticatedRequest(Self.cached(maxAge: 0))
            #expect(second.cacheStatus == .revalidated)
            #expect(try json(second)["username"] as? String == "alice")
        }
        #expect(grants == ["refresh_token": 1])
        let counts = try await gatewayCacheCounts()
        #expect(counts["alice"]?.requests == 2)
        #expect(counts["alice"]?.notModified == 1)
        await access.shutdown()
    }

    @Test func aSignInThatReplacesTheUserForgetsTheirCacheAndCookies() async throws {
        let access = try access {
            $0.cache = HTTPCache()
            $0.keepsCookies = true
        }
        try await resetGatewayCache()
        try await access.userClient.authenticate(username: "alice", password: "wonderland")
        _ = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/cookie"))
        let alice = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/whoami"))
        #expect(try json(alice)["cookie"] as? String == "gw_session=alice")
        _ = try await access.userClient.sendAuthenticatedRequest(Self.cached())
        #expect(try await access.userClient.sendAuthenticatedRequest(Self.cached()).cacheStatus == .hit)
        try await access.userClient.authenticate(username: "bob", password: "builder")
        let whoami = try await access.userClient.sendAuthenticatedRequest(ResourceRequest(path: "/api/user/whoami"))
        #expect(try json(whoami)["username"] as? String == "bob")
        #expect(try json(whoami)["cookie"] is NSNull)
        let cached = try await access.userClient.sendAuthenticatedRequest(Self.cached())
        #expect(cached.cacheStatus == .network)
        #expect(try json(cached)["username"] as? String == "bob")
        await access.shutdown()
    }

    @Test func eachUserAndTheDeviceKeepTheirOwnCookies() async throws {
        let access = try access { $0.keepsCookies = true }
        let users = [("svc-alice", "alice", "wonderland"), ("svc-bob", "bob", "builder")]
        for (key, username, password) in users {
            try await access.userClient(for: key).authenticate(username: username, password: password)
            let set = try await access.userClient(for: key).sendAuthenticatedRequest(
                ResourceRequest(path: "/api/user/cookie")
            )
            #expect(set.statusCode == 200)
        }
        for (key, username, _) in users {
            let whoami = try await access.userClient(for: key).sendAuthenticatedRequest(
                ResourceRequest(path: "/api/user/whoami")
            )
            #expect(try json(whoami)["username"] as? String == username)
            #expect(try json(whoami)["cookie"] as? String == "gw_session=\(username)")
        }
        #expect(access.userClient(for: "svc-alice").cookieJar?.cookies.map(\.name) == ["gw_session"])

        // The device's jar: its own cookie, never a user's.
        let device = access.deviceClient
        _ = try await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/cookie"))
        let second = try await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/cookie"))
        #expect(try json(second)["cookie"] as? String == "gw_device=device")

        // Unauthenticated requests keep none unless given a jar.
        _ = try await device.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/cookie"))
        let anonymous = try await device.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/cookie"))
        #expect(try json(anonymous)["cookie"] is NSNull)

        // Logout empties that user's jar alone.
        let aliceJar = try #require(access.userClient(for: "svc-alice").cookieJar)
        #expect(aliceJar.cookies.map(\.name) == ["gw_session"])
        await access.userClient(for: "svc-alice").logout()
        #expect(aliceJar.cookies.isEmpty)
        #expect(access.userClient(for: "svc-bob").cookieJar?.cookies.map(\.value) == ["bob"])
        try await access.userClient(for: "svc-alice").authenticate(username: "alice", password: "wonderland")
        let alice = try await access.userClient(for: "svc-alice").sendAuthenticatedRequest(
            ResourceRequest(path: "/api/user/whoami")
        )
        #expect(try json(alice)["cookie"] is NSNull)
        let bob = try await access.userClient(for: "svc-bob").sendAuthenticatedRequest(
            ResourceRequest(path: "/api/user/whoami")
        )
        #expect(try json(bob)["cookie"] as? String == "gw_session=bob")
        await access.shutdown()
    }

    @Test func unauthenticatedRequestsUseTheJarTheyAreGiven() async throws {
        let jar = CookieJar()
        let access = try access { $0.unauthenticatedCookieJar = jar }
        let device = access.deviceClient
        _ = try await device.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/cookie"))
        let second = try await device.sendUnauthenticatedRequest(ResourceRequest(path: "/api/public/cookie"))
        #expect(try json(second)["cookie"] as? String == "gw_public=anyone")
        #expect(jar.cookies.map(\.name) == ["gw_public"])
        // Without keepsCookies, the users and the device keep none.
        let anonymous = try await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/cookie"))
        let again = try await device.sendAnonymousRequest(ResourceRequest(path: "/api/device/cookie"))
        #expect(try json(anonymous)["cookie"] is NSNull)
        #expect(try json(again)["cookie"] is NSNull)
        await access.shutdown()
    }
}
