import Foundation  // only for `init?(url:)`; the parser works on UTF-8 bytes

/// The authority of an HTTP request, `[userinfo@]host[:port]` (RFC 3986 §3.2), in the one
/// normal form Courier compares hosts in.
///
/// The normal form: a host name or IPv4 address in lower case without trailing dots; an
/// IPv6 address without brackets, in its RFC 5952 text (`0:0::1` is `::1`, `::FFFF:1.2.3.4`
/// is `::ffff:1.2.3.4`); the port only when the text gave one. The userinfo is never kept,
/// only whether there was one (``hasUserInfo``). Two authorities are equal when all four
/// properties are; compare ``host`` or an ``Origin`` to ignore the userinfo.
///
/// Parsing is strict where lenient parsers disagree, so that what Courier checks is what curl
/// connects to:
/// - a host name holds only RFC 3986 unreserved characters (`a-z 0-9 - . _ ~`) in non-empty
///   labels: no `%`-encoding, no sub-delimiters, no non-ASCII (give the `xn--` form);
/// - a host whose last label is a number (`127.1`, `0x7f.1`, `1.2.3.04`) must be a plain
///   dotted-quad IPv4 address, since resolvers read the others as other addresses;
/// - an IPv6 zone (`[fe80::1%25eth0]`) and an `IPvFuture` literal are rejected;
/// - a port is decimal digits in 1...65535; an empty port (`host:`) means the default, as
///   RFC 3986 allows, and is `nil`;
/// - more than one `@`, whitespace and control characters are rejected anywhere.
struct Authority: Hashable, Sendable, CustomStringConvertible {
    /// What the host is.
    enum Kind: Hashable, Sendable {
        case name, ipv4, ipv6
    }

    /// Why a text is not an authority. The ``description`` is a reason for a typed error; it
    /// never repeats the input, which may hold a password.
    enum ParseError: Error, Hashable, Sendable, CustomStringConvertible {
        case emptyHost, whitespaceOrControl, nonASCII, moreThanOneAt, invalidUserInfo, invalidHostName
        case ambiguousIPv4, unclosedBracket, invalidIPv6, textAfterBracket, invalidPort, portOutOfRange

        var description: String {
            switch self {
            case .emptyHost: "the authority has no host"
            case .whitespaceOrControl: "the authority contains whitespace or a control character"
            case .nonASCII: "the authority contains a non-ASCII character; give an international name in its xn-- form"
            case .moreThanOneAt: "the authority contains more than one @"
            case .invalidUserInfo: "the user information contains a character it may not"
            case .invalidHostName: "the host name has an empty label or a character other than a-z, 0-9, -, ., _ and ~"
            case .ambiguousIPv4: "the host ends in a number but is not a dotted-quad IPv4 address such as 192.0.2.1"
            case .unclosedBracket: "the IPv6 address has no closing ]"
            case .invalidIPv6: "the text in brackets is not an IPv6 address (zones such as %25eth0 are not supported)"
            case .textAfterBracket: "only :port may follow the ] of an IPv6 address"
            case .invalidPort: "the port is not a decimal number"
            case .portOutOfRange: "the port is not in 1...65535"
            }
        }
    }

    /// The normal host: lower case, no trailing dot, an IPv6 address without brackets.
    let host: String
    /// The port the authority gave, or `nil` for the scheme's default.
    let port: Int?
    /// Whether the host is a name, an IPv4 or an IPv6 address.
    let kind: Kind
    /// Whether the authority had a `userinfo@` part (whose text is not kept).
    let hasUserInfo: Bool

    /// Whether the host is an IPv6 address.
    var isIPv6: Bool { kind == .ipv6 }

    /// The authority as it goes on the wire: `host`, `host:port` or `[::1]:443`, without userinfo.
    var description: String {
        let host = kind == .ipv6 ? "[\(host)]" : host
        return port.map { "\(host):\($0)" } ?? host
    }

    /// Parses an authority such as `HTTPRequest.authority`.
    ///
    /// - Throws: ``ParseError`` saying what is wrong.
    init(_ text: some StringProtocol) throws(ParseError) {
        let bytes = Array(text.utf8)
        guard !bytes.contains(where: { $0 <= 0x20 || $0 == 0x7F }) else { throw .whitespaceOrControl }
        guard !bytes.contains(where: { $0 >= 0x80 }) else { throw .nonASCII }
        var rest = bytes[...]
        let ats = bytes.indices.filter { bytes[$0] == .at }
        guard ats.count <= 1 else { throw .moreThanOneAt }
        if let at = ats.first {
            guard bytes[..<at].allSatisfy({ $0.isUnreserved || $0.isSubDelimiter || $0 == .colon || $0 == .percent })
            else { throw .invalidUserInfo }
            rest = bytes[(at + 1)...]
        }
        let portText: ArraySlice<UInt8>?
        if rest.first == .openBracket {
            guard let close = rest.firstIndex(of: .closeBracket) else { throw .unclosedBracket }
            let after = rest[(close + 1)...]
            guard after.isEmpty || after.first == .colon else { throw .textAfterBracket }
            portText = after.dropFirst()
            host = try Self.ipv6(rest[(rest.startIndex + 1)..<close])
            kind = .ipv6
        } else {
            let colon = rest.firstIndex(of: .colon)
            portText = colon.map { rest[($0 + 1)...] }
            (host, kind) = try Self.name(rest[..<(colon ?? rest.endIndex)])
        }
        port = try Self.port(portText ?? [])
        hasUserInfo = ats.first != nil
    }

    /// The authority of a URL's host and port, or `nil` when it has no valid host.
    ///
    /// Takes the host as Foundation decodes it (percent-decoded, international names in their
    /// `xn--` form), with or without the brackets of an IPv6 address; Foundation on Linux
    /// gives none. ``hasUserInfo`` is whether the URL has a user or password.
    init?(url: URL) {
        guard var host = url.host, !host.isEmpty else { return nil }
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        if host.contains(":") { host = "[\(host)]" }
        guard let parsed = try? Authority(url.port.map { "\(host):\($0)" } ?? host) else { return nil }
        self = url.user != nil || url.password != nil ? parsed.withUserInfo() : parsed
    }

    private init(host: String, port: Int?, kind: Kind, hasUserInfo: Bool) {
        (self.host, self.port, self.kind, self.hasUserInfo) = (host, port, kind, hasUserInfo)
    }

    private func withUserInfo() -> Authority { Authority(host: host, port: port, kind: kind, hasUserInfo: true) }

    /// The port a request to this authority goes to: the explicit one, else the default of
    /// `scheme` (see ``defaultPort(forScheme:)``).
    func port(defaultFor scheme: String) -> Int? { port ?? Self.defaultPort(forScheme: scheme) }

    /// 80 for `http`, 443 for `https` (in any case), `nil` for other schemes.
    static func defaultPort(forScheme scheme: String) -> Int? {
        switch scheme.lowercased() {
        case "http": 80
        case "https": 443
        default: nil
        }
    }

    /// A scheme, host and effective port: what same-origin checks compare (RFC 6454).
    ///
    /// `https://a.example` and `HTTPS://A.example:443` are one origin; `http://a.example`,
    /// `https://a.example:8443` and `https://b.example` are three others.
    struct Origin: Hashable, Sendable, CustomStringConvertible {
        /// The scheme in lower case.
        let scheme: String
        /// The normal host, as in ``Authority/host``.
        let host: String
        /// The explicit port, else the scheme's default; `nil` for neither.
        let port: Int?
        private let isIPv6: Bool

        /// The origin of a request with this scheme and authority.
        init(scheme: String, authority: Authority) {
            self.scheme = scheme.lowercased()
            host = authority.host
            port = authority.port(defaultFor: scheme)
            isIPv6 = authority.isIPv6
        }

        /// The origin of an absolute URL, or `nil` when it has no scheme or no valid host.
        init?(url: URL) {
            guard let scheme = url.scheme, let authority = Authority(url: url) else { return nil }
            self.init(scheme: scheme, authority: authority)
        }

        /// `scheme://host[:port]`, leaving out the scheme's default port.
        var description: String {
            let authority = Authority(
                host: host,
                port: port == defaultPort(forScheme: scheme) ? nil : port,
                kind: isIPv6 ? .ipv6 : .name,
                hasUserInfo: false
            )
            return "\(scheme)://\(authority)"
        }
    }
}

// MARK: - Parts

extension Authority {
    /// A host name or IPv4 address in normal form.
    private static func name(_ text: ArraySlice<UInt8>) throws(ParseError) -> (String, Kind) {
        var name = text.map(\.lowercased)
        while name.last == .dot { name.removeLast() }
        guard !name.isEmpty else { throw .emptyHost }
        guard name.allSatisfy(\.isUnreserved) else { throw .invalidHostName }
        let labels = name.split(separator: .dot, omittingEmptySubsequences: false)
        guard !labels.contains(where: \.isEmpty) else { throw .invalidHostName }
        // As WHATWG URL and resolvers do: a last label that is a number makes the host an IPv4 address.
        guard let last = labels.last,
            last.isDecimal || (last.starts(with: [.zero, .x]) && last.dropFirst(2).allSatisfy(\.isHexDigit))
        else { return (String(decoding: name, as: UTF8.self), .name) }
        guard labels.count == 4, labels.allSatisfy({ octet($0) != nil }) else { throw .ambiguousIPv4 }
        return (String(decoding: name, as: UTF8.self), .ipv4)
    }

    /// A decimal port; empty is `nil`.
    private static func port(_ text: ArraySlice<UInt8>) throws(ParseError) -> Int? {
        guard !text.isEmpty else { return nil }
        guard text.isDecimal else { throw .invalidPort }
        var value = 0
        for digit in text {
            value = value * 10 + Int(digit - .zero)
            guard value <= 65535 else { throw .portOutOfRange }
        }
        guard value > 0 else { throw .portOutOfRange }
        return value
    }

    /// An RFC 3986 `dec-octet`: 0...255 without leading zeros.
    private static func octet(_ text: ArraySlice<UInt8>) -> UInt8? {
        guard (1...3).contains(text.count), text.isDecimal, text.count == 1 || text.first != .zero else { return nil }
        return UInt8(exactly: text.reduce(0) { $0 * 10 + Int($1 - .zero) })
    }

    /// An IPv6 address (RFC 4291 §2.2) in its RFC 5952 text.
    private static func ipv6(_ text: ArraySlice<UInt8>) throws(ParseError) -> String {
        // The pieces before and after a `::`, the last may be a dotted quad.
        func pieces(_ part: ArraySlice<UInt8>, last: Bool) throws(ParseError) -> [UInt16] {
            guard !part.isEmpty else { return [] }
            let groups = part.split(separator: .colon, omittingEmptySubsequences: false)
            var pieces: [UInt16] = []
            for (index, group) in groups.enumerated() {
                if last, index == groups.count - 1, group.contains(.dot) {
                    let parts = group.split(separator: .dot, omittingEmptySubsequences: false)
                    let quad = parts.compactMap(octet)
                    guard parts.count == 4, quad.count == 4 else { throw .invalidIPv6 }
                    pieces += [UInt16(quad[0]) << 8 | UInt16(quad[1]), UInt16(quad[2]) << 8 | UInt16(quad[3])]
                } else {
                    guard (1...4).contains(group.count), group.allSatisfy(\.isHexDigit),
                        let piece = UInt16(String(decoding: group, as: UTF8.self), radix: 16)
                    else { throw .invalidIPv6 }
                    pieces.append(piece)
                }
            }
            return pieces
        }
        let gap = text.indices.first { text[$0] == .colon && $0 + 1 < text.endIndex && text[$0 + 1] == .colon }
        var address: [UInt16]
        if let gap {
            let head = try pieces(text[..<gap], last: false)
            let tail = try pieces(text[(gap + 2)...], last: true)
            guard head.count + tail.count <= 7 else { throw .invalidIPv6 }
            address = head + Array(repeating: 0, count: 8 - head.count - tail.count) + tail
        } else {
            address = try pieces(text, last: true)
            guard address.count == 8 else { throw .invalidIPv6 }
        }
        if address[..<5].allSatisfy({ $0 == 0 }), address[5] == 0xFFFF {  // IPv4-mapped, RFC 5952 §5
            return "::ffff:\(address[6] >> 8).\(address[6] & 0xFF).\(address[7] >> 8).\(address[7] & 0xFF)"
        }
        // The first longest run of two or more zero pieces becomes `::` (RFC 5952 §4.2).
        var best: Range<Int>?
        var start: Int?
        for index in 0...8 {
            if index < 8, address[index] == 0 {
                start = start ?? index
            } else if let runStart = start {
                if index - runStart >= 2, index - runStart > best?.count ?? 0 { best = runStart..<index }
                start = nil
            }
        }
        func hex(_ pieces: ArraySlice<UInt16>) -> String { pieces.map { String($0, radix: 16) }.joined(separator: ":") }
        guard let best else { return hex(address[...]) }
        return hex(address[..<best.lowerBound]) + "::" + hex(address[best.upperBound...])
    }
}

extension UInt8 {
    fileprivate static let at = UInt8(ascii: "@"), colon = UInt8(ascii: ":"), dot = UInt8(ascii: ".")
    fileprivate static let percent = UInt8(ascii: "%"), zero = UInt8(ascii: "0"), x = UInt8(ascii: "x")
    fileprivate static let openBracket = UInt8(ascii: "["), closeBracket = UInt8(ascii: "]")

    fileprivate var lowercased: UInt8 { (0x41...0x5A).contains(self) ? self + 0x20 : self }
    fileprivate var isDigit: Bool { (0x30...0x39).contains(self) }
    fileprivate var isHexDigit: Bool { isDigit || (0x41...0x46).contains(self) || (0x61...0x66).contains(self) }
    /// RFC 3986 `unreserved`: `A-Z a-z 0-9 - . _ ~`.
    fileprivate var isUnreserved: Bool {
        isDigit || (0x41...0x5A).contains(self) || (0x61...0x7A).contains(self) || "-._~".utf8.contains(self)
    }
    /// RFC 3986 `sub-delims`.
    fileprivate var isSubDelimiter: Bool { "!$&'()*+,;=".utf8.contains(self) }
}

extension Collection<UInt8> {
    /// Non-empty and only decimal digits.
    fileprivate var isDecimal: Bool { !isEmpty && allSatisfy(\.isDigit) }
}
