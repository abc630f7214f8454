import Foundation
import HTTPTypes
import MetricsTestKit
import Testing

@testable import Courier

/// The cache against servers it did not grow up with: httpbin's caching routes, nginx's static
/// files (ETag and Last-Modified) over HTTP/1.1 and HTTP/2, and the metrics it records.
@Suite(.timeLimit(.minutes(1)))
struct CacheServerTests {
    static func get(_ session: Session, _ path: String, _ fields: HTTPFields = [:]) async throws -> Response {
        try await session.send(HTTPRequest(method: .get, path: path, headerFields: fields))
    }

    @Test func httpbinETagIsRevalidated() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env) { $0.cache = HTTPCache() }
        let tag = UUID().uuidString
        let first = try await Self.get(session, "/etag/\(tag)")
        #expect(first.status == .ok)
        #expect(first.cacheStatus == .network)
        let second = try await Self.get(session, "/etag/\(tag)")
        #expect(second.status == .ok)
        #expect(second.cacheStatus == .revalidated)
        #expect(second.data == first.data)
        await session.shutdown()
    }

    @Test func httpbinCacheRoutes() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env) { $0.cache = HTTPCache() }
        let path = "/cache?key=\(UUID().uuidString)"
        let first = try await Self.get(session, path)
        let validated = try await Self.get(session, path, [.cacheControl: "no-cache"])
        #expect(validated.status == .ok)
        #expect(validated.cacheStatus == .revalidated)
        #expect(validated.data == first.data)

        let fresh = "/cache/60?key=\(UUID().uuidString)"
        #expect(try await Self.get(session, fresh).cacheStatus == .network)
        let hit = try await Self.get(session, fresh)
        #expect(hit.cacheStatus == .hit)
        #expect(hit.status == .ok)
        await session.shutdown()
    }

    /// A middleware after the cache step may add a credential the cache cannot see: a session
    /// with one keeps nothing in the shared partition, so no response obtained with such a
    /// credential is filed as one to a request without.
    @Test func aSessionWhoseMiddlewareMayAddCredentialsKeepsNothingShared() async throws {
        struct AddsAuthorization: Middleware {
            func intercept(
                _ request: HTTPRequest,
                body: RequestBody?,
                context: MiddlewareContext,
                next: Next
            ) async throws -> Response {
                var request = request
                request.headerFields[.authorization] = "Bearer tenant-a"
                return try await next(request, body, context)
            }
        }
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env) {
            $0.cache = HTTPCache()
            $0.middlewares = [AddsAuthorization()]
        }
        let path = "/cache/60?key=\(UUID().uuidString)"
        #expect(try await Self.get(session, path).cacheStatus == .network)
        #expect(try await Self.get(session, path).cacheStatus == .network)
        // The same request with the credential in its own fields is kept in its partition.
        let own: HTTPFields = [.authorization: "Bearer tenant-a"]
        #expect(try await Self.get(session, path, own).cacheStatus == .network)
        #expect(try await Self.get(session, path, own).cacheStatus == .hit)
        await session.shutdown()
    }

    /// A private response obtained with the cookies of the session's jar is kept for those
    /// cookies: served again while they are the same, not once the server changed them.
    @Test func aPrivateResponseIsKeptForTheCookiesTheJarSent() async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.httpbin(env) {
            $0.cache = HTTPCache()
            $0.cookieJar = CookieJar()
        }
        let path = "/response-headers?Cache-Control=private,%20max-age=60&key=\(UUID().uuidString)"
        _ = try await Self.get(session, "/cookies/set?account=1")
        #expect(try await Self.get(session, path).cacheStatus == .network)
        #expect(try await Self.get(session, path).cacheStatus == .hit)
        _ = try await Self.get(session, "/cookies/set?account=2")
        #expect(try await Self.get(session, path).cacheStatus == .network)
        #expect(try await Self.get(session, path).cacheStatus == .hit)
        await session.shutdown()
    }

    /// nginx answers a stored static file's validation with a 304: the caller gets the stored
    /// bytes, and the access log shows the 304.
    @Test(arguments: [NginxServer.http, .https])
    func nginxStaticFileIsRevalidated(_ server: NginxServer) async throws {
        let env = try await TestServers.shared()
        let session = SessionFactory.session(env, server) { $0.cache = HTTPCache() }
        let file = env.file("1k")
        let path = "\(file.urlPath)?key=\(UUID().uuidString)"
        let first = try await Self.get(session, path)
        #expect(first.status == .ok)
        #expect(first.headerFields[.eTag] != nil)
        let second = try await Self.get(session, path, [.cacheControl: "max-age=0"])
        #expect(second.cacheStatus == .revalidated)
        #expect(second.status == .ok)
        #expect(second.data.sha256Hex == file.sha256)
        #expect(second.metrics?.httpVersion == (server == .https ? .http2 : .http1_1))
        let log = try env.accessLog(server).filter { $0.uri == path }
        #expect(log.map(\.status) == [200, 304])
        await session.shutdown()
    }

    @Test func hitsMissesAndValidationsAreCounted() async throws {
        let metrics = TestMetrics()
        let cache = HTTPCache()
        try await withConformanceClient(.http1) {
            $0.cache = cache
            $0.metricsFactory = metrics
        } _: { client in
            let key = UUID().uuidString
            let fresh = "/cached?key=\(key)&cc=max-age%3D60"
            let stale = "/cached?key=\(key)s&cc=max-age%3D0&etag=%22m%22"
            _ = try await client.session.send(HTTPRequest(method: .get, path: fresh))
            _ = try await client.session.send(HTTPRequest(method: .get, path: fresh))
            _ = try await client.session.send(HTTPRequest(method: .get, path: stale))
            _ = try await client.session.send(HTTPRequest(method: .get, path: stale))
            _ = try await client.session.send(
                HTTPRequest(method: .get, path: stale, headerFields: [.cacheControl: "max-stale"])
            )
        }
        #expect(metrics.total(CacheMetrics.label, where: ["result": "miss"]) == 2)
        #expect(metrics.total(CacheMetrics.label, where: ["result": "hit"]) == 1)
        #expect(metrics.total(CacheMetrics.label, where: ["result": "revalidated"]) == 1)
        #expect(metrics.total(CacheMetrics.label, where: ["result": "stale"]) == 1)
    }

    /// A session without a cache builds exactly the chain it builds without the feature.
    @Test func noCacheNoStep() {
        var configuration = Session.Configuration()
        #expect(!configuration.middlewares(retryBudget: RetryBudget()).contains { $0 is CacheMiddleware })
        configuration.cache = HTTPCache()
        let chain = configuration.middlewares(retryBudget: RetryBudget())
        #expect(chain.count == 2)
        #expect(chain.first is CacheMiddleware)
        #expect(chain.last is RetryMiddleware)
    }
}
