import Foundation
import Testing

@testable import Courier

@Suite("Authority")
struct AuthorityTests {
    // MARK: Valid authorities

    struct Valid: Sendable, CustomTestStringConvertible {
        let text: String
        let host: String
        let port: Int?
        let kind: Authority.Kind
        let userInfo: Bool
        let description: String
        var testDescription: String { text.debugDescription }

        init(
            _ text: String,
            _ host: String,
            port: Int? = nil,
            _ kind: Authority.Kind = .name,
            userInfo: Bool = false,
            as description: String
        ) {
            (self.text, self.host, self.port, self.kind, self.userInfo, self.description) = (
                text, host, port, kind, userInfo, description
            )
        }
    }

    static let valid: [Valid] = [
        // Names, case and trailing dots
        Valid("example.com", "example.com", as: "example.com"),
        Valid("API.Example.COM", "api.example.com", as: "api.example.com"),
        Valid("example.com.", "example.com", as: "example.com"),
        Valid("Example.com..:8443", "example.com", port: 8443, as: "example.com:8443"),
        Valid("localhost:8080", "localhost", port: 8080, as: "localhost:8080"),
        Valid("my_host-1.internal~x", "my_host-1.internal~x", as: "my_host-1.internal~x"),
        Valid("123.example", "123.example", as: "123.example"),
        Valid("example.com:", "example.com", as: "example.com"),
        Valid("example.com:0443", "example.com", port: 443, as: "example.com:443"),
        Valid("a:1", "a", port: 1, as: "a:1"),
        Valid("a:65535", "a", port: 65535, as: "a:65535"),
        // IPv4
        Valid("192.0.2.1", "192.0.2.1", .ipv4, as: "192.0.2.1"),
        Valid("127.0.0.1:443", "127.0.0.1", port: 443, .ipv4, as: "127.0.0.1:443"),
        Valid("0.0.0.0", "0.0.0.0", .ipv4, as: "0.0.0.0"),
        Valid("255.255.255.255.", "255.255.255.255", .ipv4, as: "255.255.255.255"),
        // IPv6, with and without port, normalised per RFC 5952
        Valid("[::1]", "::1", .ipv6, as: "[::1]"),
        Valid("[::1]:443", "::1", port: 443, .ipv6, as: "[::1]:443"),
        Valid("[::1]:", "::1", .ipv6, as: "[::1]"),
        Valid("[::]", "::", .ipv6, as: "[::]"),
        Valid("[2001:DB8::A]:8443", "2001:db8::a", port: 8443, .ipv6, as: "[2001:db8::a]:8443"),
        Valid("[2001:0db8:0000:0000:0000:0000:0000:0001]", "2001:db8::1", .ipv6, as: "[2001:db8::1]"),
        Valid("[0:0::1]", "::1", .ipv6, as: "[::1]"),
        Valid("[2001:db8:0:1:1:1:1:1]", "2001:db8:0:1:1:1:1:1", .ipv6, as: "[2001:db8:0:1:1:1:1:1]"),
        Valid("[2001:0:0:1:0:0:0:1]", "2001:0:0:1::1", .ipv6, as: "[2001:0:0:1::1]"),
        Valid("[2001:db8:0:0:1:0:0:1]", "2001:db8::1:0:0:1", .ipv6, as: "[2001:db8::1:0:0:1]"),
        Valid("[1::]", "1::", .ipv6, as: "[1::]"),
        Valid("[::FFFF:192.0.2.1]", "::ffff:192.0.2.1", .ipv6, as: "[::ffff:192.0.2.1]"),
        Valid("[::ffff:c000:201]", "::ffff:192.0.2.1", .ipv6, as: "[::ffff:192.0.2.1]"),
        Valid("[64:ff9b::192.0.2.1]", "64:ff9b::c000:201", .ipv6, as: "[64:ff9b::c000:201]"),
        Valid("[1:2:3:4:5:6:192.0.2.1]", "1:2:3:4:5:6:c000:201", .ipv6, as: "[1:2:3:4:5:6:c000:201]"),
        // Userinfo: flagged, never kept
        Valid("user:secret@Example.com:8443", "example.com", port: 8443, userInfo: true, as: "example.com:8443"),
        Valid("@example.com", "example.com", userInfo: true, as: "example.com"),
        Valid("u%40x:p;w=1@[::1]", "::1", .ipv6, userInfo: true, as: "[::1]"),
    ]

    @Test("parses and normalises", arguments: valid)
    func parses(_ row: Valid) throws {
        let authority = try Authority(row.text)
        #expect(authority.host == row.host)
        #expect(authority.port == row.port)
        #expect(authority.kind == row.kind)
        #expect(authority.isIPv6 == (row.kind == .ipv6))
        #expect(authority.hasUserInfo == row.userInfo)
        #expect(authority.description == row.description)
        #expect("\(authority)" == row.description)
        // The description is itself an authority with the same normal form.
        let reparsed = try Authority(authority.description)
        #expect(reparsed.host == authority.host && reparsed.port == authority.port && reparsed.kind == authority.kind)
    }

    @Test("never keeps userinfo")
    func userInfoIsDropped() throws {
        let authority = try Authority("alice:hunter2@example.com")
        #expect(!String(reflecting: authority).contains("hunter2"))
        #expect(!String(reflecting: authority).contains("alice"))
        #expect(authority != (try Authority("example.com")))
        #expect(authority.host == (try Authority("example.com")).host)
    }

    @Test("parses substrings")
    func substring() throws {
        let url = "https://Example.com:8443/path"
        let authority = try Authority(url.dropFirst(8).prefix(16))
        #expect(authority.description == "example.com:8443")
    }

    // MARK: Invalid authorities

    static let invalid: [(String, Authority.ParseError)] = [
        ("", .emptyHost),
        (":443", .emptyHost),
        ("user@", .emptyHost),
        (".", .emptyHost),
        ("...:80", .emptyHost),
        ("::1", .emptyHost),
        ("[::1", .unclosedBracket),
        ("[::1:443", .unclosedBracket),
        ("[::1]x", .textAfterBracket),
        ("[::1]443", .textAfterBracket),
        ("[::1]]", .textAfterBracket),
        ("[]", .invalidIPv6),
        ("[example.com]", .invalidIPv6),
        ("[fe80::1%25eth0]", .invalidIPv6),
        ("[v1.fe]", .invalidIPv6),
        ("[1::2::3]", .invalidIPv6),
        ("[:::1]", .invalidIPv6),
        ("[:1::]", .invalidIPv6),
        ("[1:2:3:4:5:6:7:8:9]", .invalidIPv6),
        ("[1:2:3:4:5:6:7]", .invalidIPv6),
        ("[1:2:3:4::5:6:7:8]", .invalidIPv6),
        ("[12345::1]", .invalidIPv6),
        ("[::1.2.3.4.5]", .invalidIPv6),
        ("[::1.2.3.256]", .invalidIPv6),
        ("[::01.2.3.4]", .invalidIPv6),
        ("[1.2.3.4::]", .invalidIPv6),
        ("host:abc", .invalidPort),
        ("host:-1", .invalidPort),
        ("host:+80", .invalidPort),
        ("host:80:81", .invalidPort),
        ("host:８０", .nonASCII),
        ("host:70000", .portOutOfRange),
        ("host:65536", .portOutOfRange),
        ("host:99999999999999999999999", .portOutOfRange),
        ("host:0", .portOutOfRange),
        ("host:00", .portOutOfRange),
        ("a b", .whitespaceOrControl),
        (" example.com", .whitespaceOrControl),
        ("example.com ", .whitespaceOrControl),
        ("example.com\r\nX-Evil: 1", .whitespaceOrControl),
        ("example.com\n", .whitespaceOrControl),
        ("exa\tmple.com", .whitespaceOrControl),
        ("example.com\0", .whitespaceOrControl),
        ("example\u{7F}.com", .whitespaceOrControl),
        ("bücher.de", .nonASCII),
        ("a@b@example.com", .moreThanOneAt),
        ("us/er@example.com", .invalidUserInfo),
        ("u[1]@example.com", .invalidUserInfo),
        ("a%2eb", .invalidHostName),
        ("a..b", .invalidHostName),
        (".example.com", .invalidHostName),
        ("example.com/path", .invalidHostName),
        ("example.com?q", .invalidHostName),
        ("a,b", .invalidHostName),
        ("*.example.com", .invalidHostName),
        ("exa]mple", .invalidHostName),
        ("127.1", .ambiguousIPv4),
        ("1.2.3.4.5", .ambiguousIPv4),
        ("1.2.3.256", .ambiguousIPv4),
        ("01.2.3.4", .ambiguousIPv4),
        ("0x7f.0.0.1", .ambiguousIPv4),
        ("example.0x1", .ambiguousIPv4),
        ("example.123", .ambiguousIPv4),
        ("2130706433", .ambiguousIPv4),
        ("0x", .ambiguousIPv4),
    ]

    @Test("rejects", arguments: invalid)
    func rejects(_ text: String, _ error: Authority.ParseError) {
        #expect(throws: error) { try Authority(text) }
    }

    @Test("reasons never repeat the input", arguments: invalid)
    func reasons(_ text: String, _ error: Authority.ParseError) {
        #expect(!error.description.isEmpty)
        if text.count > 3 { #expect(!error.description.contains(text)) }
    }

    // MARK: Default ports

    @Test(
        "port(defaultFor:)",
        arguments: [
            ("example.com", "http", 80), ("example.com", "HTTP", 80), ("example.com", "https", 443),
            ("example.com", "HtTpS", 443), ("example.com", "ftp", nil), ("example.com", "", nil),
            ("example.com:8080", "https", 8080), ("example.com:443", "http", 443), ("example.com:21", "ftp", 21),
            ("[::1]", "https", 443), ("[::1]:8443", "https", 8443),
        ] as [(String, String, Int?)]
    )
    func defaultPorts(_ text: String, _ scheme: String, _ expected: Int?) throws {
        #expect(try Authority(text).port(defaultFor: scheme) == expected)
    }

    // MARK: URLs

    @Test(
        "init(url:)",
        arguments: [
            ("http://[::1]:8080/x", "[::1]:8080", false),
            ("https://[::1]/", "[::1]", false),
            ("https://[2001:DB8:0:0::1]:443/a?b#c", "[2001:db8::1]:443", false),
            ("https://[::ffff:192.0.2.1]/", "[::ffff:192.0.2.1]", false),
            ("https://API.Example.com./v1", "api.example.com", false),
            ("https://user:pw@Example.com:8443/", "example.com:8443", true),
            ("https://user@example.com/", "example.com", true),
            ("http://192.0.2.1:80", "192.0.2.1:80", false),
            ("https://bücher.de/", "xn--bcher-kva.de", false),
            ("//example.com/x", "example.com", false),
        ]
    )
    func fromURL(_ string: String, _ expected: String, _ userInfo: Bool) throws {
        let url = try #require(URL(string: string))
        let authority = try #require(Authority(url: url))
        #expect(authority.description == expected)
        #expect(authority.hasUserInfo == userInfo)
        #expect(authority == (try Authority((userInfo ? "u@" : "") + expected)))
    }

    @Test("init(url:) on an IPv6 URL, whose host Foundation gives without brackets on Linux")
    func ipv6URL() throws {
        let url = try #require(URL(string: "https://[FE80::1]:8443/path"))
        let authority = try #require(Authority(url: url))
        #expect(authority.isIPv6)
        #expect(authority.host == "fe80::1")
        #expect(authority.port == 8443)
        #expect(authority.description == "[fe80::1]:8443")
    }

    @Test(
        "init(url:) rejects",
        arguments: [
            "http:///path", "https://:443/", "file:///etc/hosts", "mailto:a@example.com", "/relative/path",
            "https://[fe80::1%25eth0]/", "https://127.1/", "https://a%20b/", "https://a%2Fb/", "http://example.com:0/",
            "https://b%C3%BCcher.de/",
        ]
    )
    func fromURLRejects(_ string: String) throws {
        let url = try #require(URL(string: string))
        #expect(Authority(url: url) == nil)
    }

    // MARK: Origins

    @Test(
        "origins",
        arguments: [
            ("https", "a.example", "https", "a.example", true),
            ("https", "a.example", "HTTPS", "A.example:443", true),
            ("https", "a.example.", "https", "a.example", true),
            ("https", "user:pw@a.example", "https", "a.example", true),
            ("http", "a.example", "http", "a.example:80", true),
            ("https", "[::1]", "https", "[0:0::1]:443", true),
            ("ftp", "a.example", "ftp", "a.example", true),
            ("http", "a.example", "https", "a.example", false),
            ("http", "a.example:443", "https", "a.example:443", false),
            ("https", "a.example", "https", "a.example:8443", false),
            ("https", "a.example:8443", "https", "a.example:8444", false),
            ("https", "a.example", "https", "b.example", false),
            ("https", "a.example", "https", "sub.a.example", false),
            ("https", "[::1]", "https", "127.0.0.1", false),
            ("ftp", "a.example", "ftp", "a.example:21", false),
        ]
    )
    func origins(_ schemeA: String, _ a: String, _ schemeB: String, _ b: String, _ same: Bool) throws {
        let originA = Authority.Origin(scheme: schemeA, authority: try Authority(a))
        let originB = Authority.Origin(scheme: schemeB, authority: try Authority(b))
        #expect((originA == originB) == same)
        #expect((originA.hashValue == originB.hashValue) || !same)
    }

    @Test(
        "origin descriptions",
        arguments: [
            ("HTTPS://A.example:443/x", "https://a.example"),
            ("http://a.example:8080", "http://a.example:8080"),
            ("https://[::1]:8443/", "https://[::1]:8443"),
            ("https://[::1]/", "https://[::1]"),
            ("ftp://a.example/", "ftp://a.example"),
            ("ftp://a.example:21/", "ftp://a.example:21"),
        ]
    )
    func originDescriptions(_ string: String, _ expected: String) throws {
        let url = try #require(URL(string: string))
        let origin = try #require(Authority.Origin(url: url))
        #expect(origin.description == expected)
    }

    @Test("a redirect to another origin is told apart from one to the same origin, as CurlTransfer needs")
    func redirects() throws {
        let base = try #require(URL(string: "https://API.example.com/v1/items"))
        func origin(_ location: String) throws -> Authority.Origin? {
            let url = try #require(URL(string: location, relativeTo: base))
            return Authority.Origin(url: url.absoluteURL)
        }
        #expect(try origin("/v2/items") == Authority.Origin(url: base))
        #expect(try origin("https://api.example.com:443/x") == Authority.Origin(url: base))
        #expect(try origin("http://api.example.com/x") != Authority.Origin(url: base))
        #expect(try origin("https://evil.example/x") != Authority.Origin(url: base))
        #expect(try origin("//evil.example/x")?.host == "evil.example")
        let relative = try #require(URL(string: "/relative"))
        #expect(Authority.Origin(url: relative) == nil)
    }
}
