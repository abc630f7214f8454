import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// What may be stored where, how variants are selected and updated, and how the cache keeps to
/// its size, its partitions and its invalidations.
struct CacheStorageTests {
    static let now = Date()

    static func request(_ path: String = "/a", _ fields: [(HTTPField.Name, String)] = []) -> HTTPRequest {
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example", path: path)
        for (name, value) in fields { request.headerFields.append(HTTPField(name: name, value: value)) }
        return request
    }

    static func head(_ status: HTTPResponse.Status = .ok, _ fields: [(HTTPField.Name, String)]) -> HTTPResponse {
        var head = HTTPResponse(status: status)
        for (name, value) in fields { head.headerFields.append(HTTPField(name: name, value: value)) }
        return head
    }

    @discardableResult
    static func store(
        _ cache: HTTPCache,
        _ request: HTTPRequest,
        partition: CachePartition = .shared,
        _ fields: [(HTTPField.Name, String)] = [(.cacheControl, "max-age=60")],
        body: Data = Data("x".utf8)
    ) -> CachedResponse? {
        cache.store(
            head(.ok, fields),
            body: body,
            for: request,
            key: CacheKey(request, partition: partition)!,
            requestTime: now,
            responseTime: now
        )
    }

    static func lookup(
        _ cache: HTTPCache,
        _ request: HTTPRequest,
        partition: CachePartition = .shared
    ) -> CachedResponse? {
        cache.lookup(CacheKey(request, partition: partition)!, fields: request.headerFields)
    }

    @Test func whatMayBeStored() {
        let user = CachePartition(credential: "Bearer a")
        let plain = Self.request()
        func mayStore(
            _ fields: [(HTTPField.Name, String)],
            _ request: HTTPRequest = plain,
            in partition: CachePartition = .shared,
            status: HTTPResponse.Status = .ok
        ) -> Bool {
            CacheRules.mayStore(Self.head(status, fields), for: request, in: partition)
        }
        #expect(mayStore([]), "200 is heuristically cacheable")
        #expect(!mayStore([], status: .found), "302 needs explicit freshness")
        #expect(mayStore([(.cacheControl, "max-age=5")], status: .found))
        #expect(!mayStore([], status: .partialContent))
        #expect(!mayStore([], status: .internalServerError))
        #expect(!mayStore([(.cacheControl, "no-store, max-age=60")]))
        #expect(!mayStore([(.cacheControl, "max-age=60")], Self.request("/a", [(.cacheControl, "no-store")])))
        #expect(!mayStore([(.cacheControl, "private, max-age=60")]), "private, in the shared partition")
        #expect(mayStore([(.cacheControl, "private, max-age=60")], in: user))
        #expect(!mayStore([(.setCookie, "a=b")]))
        #expect(mayStore([(.setCookie, "a=b")], in: user))
        #expect(!mayStore([(.contentType, "text/event-stream")], in: user))
        let authorized = Self.request("/a", [(.authorization, "Bearer a")])
        #expect(!mayStore([(.cacheControl, "max-age=60")], authorized), "Authorization in the shared partition")
        #expect(mayStore([(.cacheControl, "public, max-age=60")], authorized))
        #expect(mayStore([(.cacheControl, "s-maxage=60")], authorized))
        var post = plain
        post.method = .post
        #expect(!mayStore([(.cacheControl, "max-age=60")], post))
    }

    @Test func partitionsNeverSeeEachOther() {
        let cache = HTTPCache()
        let alice = CachePartition(credential: "Bearer alice")
        let bob = CachePartition(credential: "Bearer bob")
        Self.store(cache, Self.request(), partition: alice, body: Data("alice".utf8))
        #expect(Self.lookup(cache, Self.request(), partition: alice)?.body == Data("alice".utf8))
        #expect(Self.lookup(cache, Self.request(), partition: bob) == nil)
        #expect(Self.lookup(cache, Self.request(), partition: .shared) == nil)
        Self.store(cache, Self.request(), partition: bob, body: Data("bob".utf8))
        cache.removeAll(in: alice)
        #expect(Self.lookup(cache, Self.request(), partition: alice) == nil)
        #expect(Self.lookup(cache, Self.request(), partition: bob)?.body == Data("bob".utf8))
    }

    @Test func defaultPartitionFollowsTheCredentialFields() {
        let anonymous = CacheMiddleware.defaultPartition(of: Self.request())
        let alice = CacheMiddleware.defaultPartition(of: Self.request("/a", [(.authorization, "Bearer alice")]))
        let bob = CacheMiddleware.defaultPartition(of: Self.request("/a", [(.authorization, "Bearer bob")]))
        let cookie = CacheMiddleware.defaultPartition(of: Self.request("/a", [(.cookie, "s=1")]))
        #expect(anonymous == .shared)
        #expect(alice != bob && alice != .shared && cookie != .shared && cookie != alice)
        #expect(alice == CacheMiddleware.defaultPartition(of: Self.request("/b", [(.authorization, "Bearer alice")])))
        #expect("\(alice)" == "credential", "the credential never shows")
    }

    @Test func varyMatching() {
        let cache = HTTPCache()
        let english = Self.request("/a", [(.acceptLanguage, " en ,  fr")])
        Self.store(cache, english, [(.cacheControl, "max-age=60"), (.vary, "Accept-Language")], body: Data("en".utf8))
        #expect(Self.lookup(cache, Self.request("/a", [(.acceptLanguage, "en, fr")]))?.body == Data("en".utf8))
        #expect(Self.lookup(cache, Self.request("/a", [(.acceptLanguage, "de")])) == nil)
        #expect(Self.lookup(cache, Self.request("/a")) == nil, "an absent field matches only an absent one")
        Self.store(
            cache,
            Self.request("/a", [(.acceptLanguage, "de")]),
            [(.cacheControl, "max-age=60"), (.vary, "accept-language")],
            body: Data("de".utf8)
        )
        #expect(Self.lookup(cache, Self.request("/a", [(.acceptLanguage, "de")]))?.body == Data("de".utf8))
        #expect(Self.lookup(cache, english)?.body == Data("en".utf8), "each variant is kept")

        Self.store(cache, Self.request("/star"), [(.cacheControl, "max-age=60"), (.vary, "*")])
        #expect(Self.lookup(cache, Self.request("/star")) == nil, "Vary: * never matches")
    }

    @Test func aNotModifiedUpdatesTheStoredFields() {
        let stored: HTTPFields = [
            .eTag: "\"1\"", .cacheControl: "max-age=0", .contentLength: "4", HTTPField.Name("X-Old")!: "kept",
        ]
        let update: HTTPFields = [.cacheControl: "max-age=60", .contentLength: "0", HTTPField.Name("X-New")!: "added"]
        let merged = CacheRules.updated(stored, with: update)
        #expect(merged[.cacheControl] == "max-age=60")
        #expect(merged[.contentLength] == "4")
        #expect(merged[HTTPField.Name("X-Old")!] == "kept")
        #expect(merged[HTTPField.Name("X-New")!] == "added")
        #expect(merged[.eTag] == "\"1\"")
    }

    @Test func evictsTheLeastRecentlyUsedByBytes() throws {
        let body = Data(repeating: 65, count: 700)
        let cache = HTTPCache(maximumBytes: 8 * 1000)  // an entry of ~1 KB fits; twelve do not
        for index in 0..<12 { #expect(Self.store(cache, Self.request("/\(index)"), body: body) != nil) }
        #expect(cache.storedBytes <= cache.maximumBytes)
        let kept = (0..<12).filter { Self.lookup(cache, Self.request("/\($0)")) != nil }
        #expect(kept.count < 12 && kept.count >= 2)
        #expect(kept == Array((12 - kept.count)..<12), "the oldest went first")

        // Using the oldest kept entry makes it the newest: the next store evicts another.
        let oldest = try #require(kept.first)
        _ = Self.lookup(cache, Self.request("/\(oldest)"))
        Self.store(cache, Self.request("/new"), body: body)
        #expect(Self.lookup(cache, Self.request("/\(oldest)")) != nil)
        #expect(Self.lookup(cache, Self.request("/\(kept[1])")) == nil)
    }

    @Test func tooLargeIsNotStored() {
        let cache = HTTPCache(maximumBytes: 8000)
        #expect(Self.store(cache, Self.request(), body: Data(count: 1001)) == nil)
        #expect(cache.storedBytes == 0)
        #expect(Self.store(cache, Self.request(), body: Data(count: 100)) != nil)
        cache.removeAll()
        #expect(cache.storedBytes == 0)
    }

    @Test func invalidationReachesEveryPartition() {
        let cache = HTTPCache()
        let alice = CachePartition(credential: "alice")
        Self.store(cache, Self.request("/a?x=1"))
        Self.store(cache, Self.request("/a?x=1"), partition: alice)
        Self.store(cache, Self.request("/b"))
        cache.invalidate(CacheKey(Self.request("/a?x=1"), partition: .shared)!)
        #expect(Self.lookup(cache, Self.request("/a?x=1")) == nil)
        #expect(Self.lookup(cache, Self.request("/a?x=1"), partition: alice) == nil)
        #expect(Self.lookup(cache, Self.request("/b")) != nil)
    }
}
