import Foundation
import HTTPTypes
import Testing

@testable import Courier

/// The session's cookie step without a network: which jar a request uses, how the jar's field
/// joins the caller's, and that a secured transport sends cookies only to trusted hosts.
@Suite struct SessionCookiesTests {
    private func request(_ host: String, cookie: String? = nil) -> HTTPRequest {
        var request = HTTPRequest(method: .get, scheme: "https", authority: host, path: "/")
        if let cookie { request.headerFields[.cookie] = cookie }
        return request
    }

    private func jar(with hosts: String...) -> CookieJar {
        let jar = CookieJar()
        for host in hosts {
            var head = HTTPResponse(status: .ok)
            head.headerFields[.setCookie] = "jar=\(host)"
            jar.store(from: head, for: request(host))
        }
        return jar
    }

    @Test func aSessionWithoutAJarHasNoCookieStep() {
        #expect(SessionCookies(Session.Configuration(), security: .unpinned) == nil)
    }

    @Test func theJarsFieldFollowsTheCallersOwn() throws {
        let jar = jar(with: "example.com")
        var configuration = Session.Configuration()
        configuration.cookieJar = jar
        let cookies = try #require(SessionCookies(configuration, security: .unpinned))
        let own = cookies.attaching(to: request("example.com", cookie: "mine=1"), from: jar)
        #expect(own.headerFields[.cookie] == "mine=1; jar=example.com")
        #expect(own.headerFields[values: .cookie].count == 1)
        let plain = cookies.attaching(to: request("example.com"), from: jar)
        #expect(plain.headerFields[.cookie] == "jar=example.com")
        let none = cookies.attaching(to: request("other.com"), from: jar)
        #expect(none.headerFields[.cookie] == nil)
    }

    @Test func theResolverWinsOverTheSessionsJar() throws {
        let shared = jar(with: "example.com")
        let personal = jar(with: "example.com")
        var configuration = Session.Configuration()
        configuration.cookieJar = shared
        configuration.cookieJarOfRequest = { _ in personal }
        let cookies = try #require(SessionCookies(configuration, security: .unpinned))
        let context = MiddlewareContext(
            taskID: .next(),
            logger: Session.silentLogger,
            options: TransferOptions(),
            control: .none
        )
        #expect(cookies.jar(for: context) === personal)
        configuration.cookieJarOfRequest = { _ in nil }
        #expect(try #require(SessionCookies(configuration, security: .unpinned)).jar(for: context) == nil)
    }

    @Test func aSecuredTransportSendsCookiesOnlyToTrustedHosts() throws {
        let jar = jar(with: "trusted.example", "untrusted.example")
        var configuration = Session.Configuration()
        configuration.cookieJar = jar
        let security = try SecurityConfiguration.secured(trust: [try TrustPolicy.systemRoots(host: "trusted.example")])
        let cookies = try #require(SessionCookies(configuration, security: security))
        #expect(
            cookies.attaching(to: request("trusted.example"), from: jar).headerFields[.cookie] == "jar=trusted.example"
        )
        #expect(cookies.attaching(to: request("untrusted.example"), from: jar).headerFields[.cookie] == nil)
    }
}
