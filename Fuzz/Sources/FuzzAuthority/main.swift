import Foundation
import FuzzSupport
import HTTPTypes
import Logging

// Authorities, absolute URLs and redirect `Location` values, the bytes every host decision
// reads: the authority parser, the split of an absolute URL, the credential gate, and the
// redirect layer's next hop on a plain and a secured transport. Any bytes become a value or
// a typed error, and what is accepted is consistent: a parsed authority is in its normal form
// and parses again to itself; the gate lets through only a trusted host without userinfo;
// a followed redirect goes where the origin it was compared as says, and leaves the origin's
// credentials behind when it leaves the origin.
@testable import Courier

enum Fixture {
    /// The request every redirect answers: to a trusted host, carrying credentials.
    static let request: HTTPRequest = {
        var request = HTTPRequest(method: .get, scheme: "https", authority: "api.example.com:8443", path: "/start?q=1")
        request.headerFields[.authorization] = "Bearer token"
        request.headerFields[.cookie] = "session=1"
        return request
    }()
    static let origin = Authority.Origin(url: URL(string: "https://api.example.com:8443/")!)!
    /// `api.example.com` on every port, and one label under `cdn.example.com` on 443.
    static let secured = try! SecurityConfiguration.secured(trust: [
        .systemRoots(host: "api.example.com"), .systemRoots(host: "*.cdn.example.com", port: 443),
    ])
    static let redirects = [
        RedirectMiddleware(security: .unpinned, approval: nil),
        RedirectMiddleware(security: secured, approval: nil),
    ]
    static let context = MiddlewareContext(
        taskID: .next(),
        logger: Logger(label: "fuzz"),
        options: TransferOptions(maximumRedirects: 5),
        control: .none
    )
}

extension UInt8 {
    var isForbiddenInAuthority: Bool { self <= 0x20 || self == 0x7F || self >= 0x80 }
    /// `0-9 a-f : .`: an IPv6 address in normal form.
    var isHexDigitOrSeparator: Bool {
        (0x30...0x39).contains(self) || (0x61...0x66).contains(self) || self == UInt8(ascii: ":")
            || self == UInt8(ascii: ".")
    }
    /// `a-z 0-9 - . _ ~`: a host name in normal form.
    var isNormalHostByte: Bool {
        (0x61...0x7A).contains(self) || (0x30...0x39).contains(self) || "-._~".utf8.contains(self)
    }
}

/// `text` with ASCII letters in upper case (the rest as it is).
func asciiUppercased(_ text: String) -> String {
    String(decoding: text.utf8.map { (0x61...0x7A).contains($0) ? $0 - 0x20 : $0 }, as: UTF8.self)
}

/// A trusted host of `Fixture.secured` for a connection to `port`.
func isTrusted(_ host: String, port: Int) -> Bool {
    if host == "api.example.com" { return true }
    let suffix = ".cdn.example.com"
    guard port == 443, host.hasSuffix(suffix) else { return false }
    let label = host.dropLast(suffix.count)
    return !label.isEmpty && label.utf8.allSatisfy { $0.isNormalHostByte && $0 != UInt8(ascii: ".") }
}

/// The authority parser on its own.
func checkAuthority(_ text: String) {
    let bytes = Array(text.utf8)
    let parsed: Authority
    do throws(Authority.ParseError) {
        parsed = try Authority(text)
    } catch {
        if bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            precondition(error == .whitespaceOrControl, "\(error) for an authority with a control byte")
        } else if bytes.contains(where: { $0 >= 0x80 }) {
            precondition(error == .nonASCII, "\(error) for a non-ASCII authority")
        }
        precondition((try? Authority(asciiUppercased(text))) == nil, "accepted only in upper case")
        return
    }
    precondition(!bytes.contains(where: \.isForbiddenInAuthority), "accepted a space, control or non-ASCII byte")
    precondition(parsed.hasUserInfo == bytes.contains(UInt8(ascii: "@")), "userinfo not noticed")
    precondition(!parsed.host.isEmpty, "empty host")
    if let port = parsed.port { precondition((1...65535).contains(port), "port \(port)") }
    let host = Array(parsed.host.utf8)
    switch parsed.kind {
    case .name, .ipv4:
        precondition(host.allSatisfy(\.isNormalHostByte), "host \(parsed.host) not in normal form")
        precondition(
            !parsed.host.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty),
            "empty label in \(parsed.host)"
        )
        if parsed.kind == .ipv4 {
            let octets = parsed.host.split(separator: ".").compactMap { UInt8($0) }
            precondition(octets.count == 4, "IPv4 \(parsed.host)")
        }
    case .ipv6:
        precondition(
            host.allSatisfy { $0.isHexDigitOrSeparator },
            "IPv6 \(parsed.host) not in normal form"
        )
    }
    // The normal form is a fixed point: rendered (without userinfo) and parsed again, the same.
    guard let again = try? Authority(parsed.description) else {
        preconditionFailure("\(parsed.description) does not parse again")
    }
    precondition(
        again.host == parsed.host && again.port == parsed.port && again.kind == parsed.kind && !again.hasUserInfo,
        "\(parsed.description) parses to \(again)"
    )
    precondition(Authority.normalizedHost(parsed.host) == parsed.host, "normalizedHost moves \(parsed.host)")
    precondition((try? Authority(asciiUppercased(text))) == parsed, "upper case parses differently")
}

/// An absolute URL: the request-target split and the TLS hook's split agree.
func checkURL(_ text: String) {
    _ = try? RequestTarget(text)
    guard let parts = try? RequestTarget.absoluteParts(of: text) else { return }
    precondition(parts.scheme == "http" || parts.scheme == "https", "scheme \(parts.scheme)")
    precondition(parts.pathAndQuery.hasPrefix("/"), "path \(parts.pathAndQuery)")
    guard let authority = try? Authority(parts.authority), let tls = Authority.of(url: text) else {
        preconditionFailure("an accepted URL without an authority")
    }
    precondition(!authority.hasUserInfo, "userinfo accepted in a request target")
    precondition(tls.scheme == parts.scheme && tls.authority == authority, "the TLS hook would look up \(tls)")
}

/// The credential gate, for `text` as a request's authority.
func checkGate(_ text: String) {
    let request = HTTPRequest(method: .get, scheme: "https", authority: text, path: "/")
    do {
        try Fixture.secured.checkCredentialTarget(request)
    } catch {
        return
    }
    guard let authority = try? Authority(request.authority ?? "") else {
        preconditionFailure("credentials allowed for an authority that does not parse")
    }
    precondition(!authority.hasUserInfo, "credentials allowed with userinfo")
    precondition(
        isTrusted(authority.host, port: authority.port(defaultFor: "https") ?? 0),
        "credentials allowed for \(authority)"
    )
}

/// A `Location` answering `Fixture.request`.
func checkRedirect(_ location: String) {
    var head = HTTPResponse(status: .found)
    head.headerFields[.location] = location
    let response = Response(head: head)
    for (index, redirect) in Fixture.redirects.enumerated() {
        let hop: RedirectMiddleware.Hop?
        do {
            hop = try redirect.nextHop(
                after: response,
                of: Fixture.request,
                body: nil,
                followed: 0,
                context: Fixture.context
            )
        } catch let error as CourierError {
            precondition(
                [.insecureRedirect, .untrustedHost, .insecureScheme, .invalidURL, .invalidHeader].contains(error.kind),
                "\(error.kind)"
            )
            continue
        } catch {
            preconditionFailure("not a CourierError: \(error)")
        }
        guard let next = hop?.request, let url = hop?.url else { continue }
        precondition(next.scheme == "https", "followed HTTPS to \(next.scheme ?? "nothing")")
        guard let path = next.path, let authority = try? Authority(next.authority ?? "") else {
            preconditionFailure("a hop without a valid authority or path")
        }
        precondition(!authority.hasUserInfo, "a hop with userinfo")
        precondition(path.hasPrefix("/") && !path.contains("#"), "hop path \(path)")
        let goesTo = Authority.Origin(scheme: "https", authority: authority)
        precondition(
            Authority.Origin(url: url) == goesTo,
            "compared as \(String(describing: Authority.Origin(url: url))), sent to \(goesTo)"
        )
        if goesTo != Fixture.origin {
            precondition(
                next.headerFields[.authorization] == nil && next.headerFields[.cookie] == nil,
                "credentials kept on the way to \(goesTo)"
            )
        }
        if index == 1 {
            precondition(isTrusted(authority.host, port: goesTo.port ?? 0), "secured hop to \(goesTo)")
        }
        // What the TLS hook looks up for the connection libcurl makes.
        guard let connection = Authority.of(url: "https://\(next.authority ?? "")\(path)") else {
            preconditionFailure("the TLS hook finds no authority")
        }
        precondition(connection.authority == authority, "the TLS hook would look up \(connection.authority)")
    }
}

@_cdecl("LLVMFuzzerTestOneInput")
func fuzzAuthority(_ start: UnsafePointer<UInt8>?, _ count: Int) -> CInt {
    let text = FuzzInput(start, count).text
    checkAuthority(text)
    checkURL(text)
    checkGate(text)
    checkRedirect(text)
    _ = Authority.normalizedHost(text)
    _ = try? HostPattern(text)
    return 0
}

Fuzzer.run(fuzzAuthority)
