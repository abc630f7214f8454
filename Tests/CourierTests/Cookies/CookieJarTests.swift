import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// What a ``CookieJar`` stores (RFC 6265bis §5.7) and sends (§5.8.3), without a network.
@Suite struct CookieJarTests {
    private let start = Date(timeIntervalSince1970: 1_700_000_000)

    private func request(_ url: String) -> HTTPRequest {
        let url = URL(string: url)!
        var host = url.host!
        if host.contains(":"), !host.hasPrefix("[") { host = "[\(host)]" }
        let authority = url.port.map { "\(host):\($0)" } ?? host
        let query = url.query.map { "?\($0)" } ?? ""
        return HTTPRequest(
            method: .get,
            scheme: url.scheme,
            authority: authority,
            path: (url.path.isEmpty ? "/" : url.path) + query
        )
    }

    /// Stores the `Set-Cookie` values `fields` as the answer to a GET of `url`.
    private func set(_ jar: CookieJar, _ url: String, _ fields: String..., at now: Date? = nil) {
        var head = HTTPResponse(status: .ok)
        for field in fields { head.headerFields.append(HTTPField(name: .setCookie, value: field)) }
        jar.store(from: head, for: request(url), now: now ?? start)
    }

    /// The `Cookie` value a GET of `url` carries.
    private func sent(_ jar: CookieJar, _ url: String, at now: Date? = nil) -> String? {
        jar.headerValue(for: request(url), now: now ?? start)
    }

    @Test func aCookieWithoutDomainIsHostOnly() throws {
        let jar = CookieJar()
        set(jar, "https://www.example.com/", "a=1")
        let cookie = try #require(jar.cookies.first)
        #expect(cookie.isHostOnly)
        #expect(cookie.domain == "www.example.com")
        #expect(sent(jar, "https://www.example.com/") == "a=1")
        #expect(sent(jar, "https://sub.www.example.com/") == nil)
        #expect(sent(jar, "https://example.com/") == nil)
    }

    @Test func aDomainCookieGoesToTheDomainAndItsSubdomains() throws {
        let jar = CookieJar()
        set(jar, "https://a.example.com/", "a=1; Domain=.EXAMPLE.com")
        let cookie = try #require(jar.cookies.first)
        #expect(!cookie.isHostOnly)
        #expect(cookie.domain == "example.com")
        #expect(sent(jar, "https://example.com/") == "a=1")
        #expect(sent(jar, "https://b.a.example.com/") == "a=1")
        #expect(sent(jar, "https://notexample.com/") == nil)
        #expect(sent(jar, "https://example.com.evil.org/") == nil)
    }

    @Test func aDomainThatDoesNotCoverTheHostIsRefused() {
        let jar = CookieJar()
        set(jar, "https://a.example.com/", "a=1; Domain=other.com")
        set(jar, "https://a.example.com/", "b=1; Domain=b.a.example.com")
        set(jar, "https://a.example.com/", "c=1; Domain=ample.com")
        #expect(jar.cookies.isEmpty)
    }

    @Test func aPublicSuffixIsRefusedAsDomain() {
        let jar = CookieJar()
        set(jar, "https://a.example.com/", "ok=1; Domain=example.com")
        set(jar, "https://a.example.com/", "tld=1; Domain=com")
        set(jar, "https://a.example.co.uk/", "uk=1; Domain=co.uk")
        set(jar, "https://me.github.io/", "io=1; Domain=github.io")
        #expect(jar.cookies.map(\.name) == ["ok"])
    }

    @Test func libpslKnowsMultiLabelSuffixes() {
        #expect(PublicSuffixes.contains("com"))
        #expect(PublicSuffixes.contains("co.uk"))
        #expect(PublicSuffixes.contains("github.io"))
        #expect(!PublicSuffixes.contains("example.com"))
        #expect(!PublicSuffixes.contains("example.co.uk"))
    }

    @Test func aPublicSuffixThatIsTheHostItselfMakesAHostOnlyCookie() throws {
        let jar = CookieJar()
        set(jar, "https://github.io/", "a=1; Domain=github.io")
        let cookie = try #require(jar.cookies.first)
        #expect(cookie.isHostOnly)
        #expect(sent(jar, "https://me.github.io/") == nil)
        #expect(sent(jar, "https://github.io/") == "a=1")
    }

    @Test func anIPAddressMatchesOnlyItself() {
        let jar = CookieJar()
        set(jar, "http://127.0.0.1:8080/", "a=1; Domain=0.0.1")
        set(jar, "http://127.0.0.1:8080/", "b=1; Domain=127.0.0.1")
        #expect(jar.cookies.map(\.name) == ["b"])
        #expect(sent(jar, "http://127.0.0.1:9090/") == "b=1")  // ports do not separate cookies
        #expect(sent(jar, "http://1.127.0.0.1/") == nil)
        set(jar, "http://[::1]:8080/", "c=1")
        #expect(sent(jar, "http://[::1]/") == "c=1")
    }

    @Test func defaultPathAndPathMatching() {
        #expect(CookieMatching.defaultPath("/") == "/")
        #expect(CookieMatching.defaultPath("") == "/")
        #expect(CookieMatching.defaultPath("relative") == "/")
        #expect(CookieMatching.defaultPath("/file") == "/")
        #expect(CookieMatching.defaultPath("/dir/file") == "/dir")
        #expect(CookieMatching.defaultPath("/dir/sub/") == "/dir/sub")
        #expect(CookieMatching.pathMatches("/dir", "/dir"))
        #expect(CookieMatching.pathMatches("/dir/file", "/dir"))
        #expect(CookieMatching.pathMatches("/dir/file", "/dir/"))
        #expect(CookieMatching.pathMatches("/anything", "/"))
        #expect(!CookieMatching.pathMatches("/directory", "/dir"))
        #expect(!CookieMatching.pathMatches("/di", "/dir"))
        #expect(!CookieMatching.pathMatches("/", "/dir"))
    }

    @Test func theDefaultPathComesFromTheRequestWithoutItsQuery() throws {
        let jar = CookieJar()
        set(jar, "https://example.com/account/login?next=/a/b/c", "a=1")
        #expect(try #require(jar.cookies.first).path == "/account")
        #expect(sent(jar, "https://example.com/account/settings") == "a=1")
        #expect(sent(jar, "https://example.com/account?x=1") == "a=1")
        #expect(sent(jar, "https://example.com/accounting") == nil)
        #expect(sent(jar, "https://example.com/") == nil)
    }

    @Test func aSecureCookieGoesOnlyOverHTTPS() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "s=1; Secure")
        #expect(sent(jar, "https://example.com/") == "s=1")
        #expect(sent(jar, "http://example.com/") == nil)
    }

    @Test func aSecureCookieFromPlainHTTPIsRefused() {
        let jar = CookieJar()
        set(jar, "http://example.com/", "s=1; Secure")
        set(jar, "http://127.0.0.1/", "s=1; Secure")  // loopback HTTP is not secure either
        #expect(jar.cookies.isEmpty)
    }

    @Test func plainHTTPCannotShadowASecureCookie() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "s=secure; Secure; Domain=example.com")
        set(jar, "http://a.example.com/", "s=plain")
        set(jar, "http://example.com/", "s=plain; Path=/deeper")
        #expect(jar.cookies.map(\.value) == ["secure"])
        set(jar, "http://example.com/", "other=plain")  // another name is fine
        set(jar, "https://example.com/", "s=replaced")  // over HTTPS it may
        #expect(Set(jar.cookies.map(\.value)) == ["secure", "plain", "replaced"])
    }

    @Test func prefixesAreEnforced() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "__Secure-ok=1; Secure")
        set(jar, "https://example.com/", "__Secure-no=1")
        set(jar, "https://example.com/", "__secure-lower=1")
        set(jar, "https://example.com/", "__Host-ok=1; Secure; Path=/")
        set(jar, "https://example.com/", "__Host-domain=1; Secure; Path=/; Domain=example.com")
        set(jar, "https://example.com/", "__Host-path=1; Secure; Path=/sub")
        set(jar, "https://example.com/login", "__Host-nopath=1; Secure")  // the default path is not enough
        set(jar, "https://example.com/", "__HOST-insecure=1; Path=/")
        set(jar, "https://example.com/", "=__Host-x=1; Secure; Path=/")  // a nameless pretender
        #expect(Set(jar.cookies.map(\.name)) == ["__Secure-ok", "__Host-ok"])
    }

    @Test func aNewCookieReplacesTheOldOneAndKeepsItsCreationTime() throws {
        let jar = CookieJar()
        set(jar, "https://example.com/", "a=1", at: start)
        set(jar, "https://example.com/", "b=1", at: start + 1)
        set(jar, "https://example.com/", "a=2", at: start + 10)
        #expect(jar.cookies.count == 2)
        // `a` keeps its first creation time, so it still goes before `b`.
        #expect(sent(jar, "https://example.com/", at: start + 20) == "a=2; b=1")
        // Another path or a domain cookie is another cookie.
        set(jar, "https://example.com/", "a=3; Path=/x", "a=4; Domain=example.com", at: start + 30)
        #expect(jar.cookies.count == 4)
    }

    @Test func anExpiredCookieDeletesTheOldOne() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "a=1", "b=1")
        set(jar, "https://example.com/", "a=gone; Max-Age=0")
        set(jar, "https://example.com/", "b=gone; Expires=Thu, 01 Jan 1970 00:00:00 GMT")
        set(jar, "https://example.com/", "c=never; Max-Age=-5")
        #expect(jar.cookies.isEmpty)
    }

    @Test func expiredCookiesAreNeverSent() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "short=1; Max-Age=10", "long=1; Max-Age=100")
        #expect(sent(jar, "https://example.com/", at: start + 5) == "short=1; long=1")
        #expect(sent(jar, "https://example.com/", at: start + 10) == "long=1")
        #expect(sent(jar, "https://example.com/", at: start + 100) == nil)
    }

    @Test func longerPathsGoFirstThenOlderCookies() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "root=1; Path=/", at: start)
        set(jar, "https://example.com/", "deep=1; Path=/a/b", at: start + 1)
        set(jar, "https://example.com/", "mid=1; Path=/a", at: start + 2)
        set(jar, "https://example.com/", "root2=1; Path=/", at: start + 3)
        set(jar, "https://sub.example.com/", "dom=1; Domain=example.com; Path=/a", at: start - 1)
        #expect(sent(jar, "https://example.com/a/b/c") == "deep=1; dom=1; mid=1; root=1; root2=1")
    }

    @Test func aNamelessCookieIsSentAsItsValue() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "lonely", at: start)
        set(jar, "https://example.com/", "a=1", at: start + 1)
        #expect(sent(jar, "https://example.com/") == "lonely; a=1")
    }

    @Test func theDomainLimitEvictsTheLeastRecentlyUsed() {
        let jar = CookieJar(limits: .init(cookiesPerDomain: 3, totalCookies: 100))
        for index in 0..<3 { set(jar, "https://example.com/", "c\(index)=1", at: start + Double(index)) }
        _ = sent(jar, "https://example.com/", at: start + 10)  // all three used at +10
        set(jar, "https://example.com/", "c1=again", at: start + 11)  // c1 used last
        set(jar, "https://example.com/", "c3=1", at: start + 12)
        // c0 and c2 share the oldest use; c0 is older by creation and goes.
        #expect(Set(jar.cookies.map(\.name)) == ["c1", "c2", "c3"])
        set(jar, "https://other.com/", "x=1", at: start + 13)
        #expect(jar.cookies.count == 4)  // another domain has its own limit
    }

    @Test func expiredCookiesGoBeforeLiveOnes() {
        let jar = CookieJar(limits: .init(cookiesPerDomain: 2, totalCookies: 100))
        set(jar, "https://example.com/", "old=1", at: start)
        set(jar, "https://example.com/", "brief=1; Max-Age=5", at: start + 1)
        set(jar, "https://example.com/", "new=1", at: start + 10)
        #expect(Set(jar.cookies.map(\.name)) == ["old", "new"])
    }

    @Test func theTotalLimitEvictsTheLeastRecentlyUsedOfAll() {
        let jar = CookieJar(limits: .init(cookiesPerDomain: 10, totalCookies: 3))
        set(jar, "https://a.com/", "a=1", at: start)
        set(jar, "https://b.com/", "b=1", at: start + 1)
        set(jar, "https://c.com/", "c=1", at: start + 2)
        _ = sent(jar, "https://a.com/", at: start + 3)
        set(jar, "https://d.com/", "d=1", at: start + 4)
        #expect(Set(jar.cookies.map(\.name)) == ["a", "c", "d"])
    }

    @Test func cookiesForAURLAndRemoveAll() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "a=1; HttpOnly; SameSite=Lax")
        let cookies = jar.cookies(for: URL(string: "https://example.com/page")!)
        #expect(cookies.map(\.name) == ["a"])
        #expect(cookies.first?.isHTTPOnly == true)
        #expect(cookies.first?.sameSite == .lax)
        #expect(jar.cookies(for: URL(string: "ftp://example.com/")!).isEmpty)
        jar.removeAll()
        #expect(jar.cookies.isEmpty)
        #expect(sent(jar, "https://example.com/") == nil)
    }

    @Test func aResponseWithManySetCookieFieldsStoresEach() {
        let jar = CookieJar()
        set(jar, "https://example.com/", "a=1", "=; Path=/", "c=3; Domain=other.com", "b=2")
        let sent = sent(jar, "https://example.com/")?.split(separator: "; ").sorted()
        #expect(sent == ["a=1", "b=2"])
    }
}
