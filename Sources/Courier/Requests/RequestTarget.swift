/// The parsed and checked ``ResourceRequest/path``: relative, or an absolute HTTP(S) URL
/// split into scheme, authority, and path with query.
struct RequestTarget: Equatable {
    /// `http` or `https` for an absolute URL; `nil` for a path relative to the base URL.
    var scheme: String?
    /// `host[:port]` for an absolute URL.
    var authority: String?
    /// The path and query, as sent.
    var pathAndQuery: String

    /// Parses and checks a request's path.
    ///
    /// - Throws: ``CourierError/Kind/invalidURL`` when the path is empty, protocol-relative
    ///   (`//host`), has a scheme other than HTTP(S), credentials, a fragment, or a byte
    ///   that must be percent-encoded (space, control, non-ASCII, `"<>[\]^{|}` and backtick).
    ///   The message names the offending character by its code point and its UTF-8 offset in
    ///   `path`, and never repeats the path or its query.
    init(_ path: String) throws {
        guard !path.isEmpty else { throw CourierError(kind: .invalidURL, message: "the path is empty") }
        if let absolute = try Self.absoluteParts(of: path) {
            scheme = absolute.scheme
            authority = absolute.authority
            pathAndQuery = absolute.pathAndQuery
        } else {
            guard !path.hasPrefix("//") else {
                throw CourierError(
                    kind: .invalidURL,
                    message: "the path starts with `//`, which names a host; give an absolute URL instead"
                )
            }
            scheme = nil
            authority = nil
            pathAndQuery = path
        }
        // An absolute URL's path and query end `path` (a `/` may have been put before them).
        try Self.checkPathAndQuery(pathAndQuery, offset: path.utf8.count - pathAndQuery.utf8.count)
    }

    /// The parts of an absolute URL, or `nil` when `target` has no scheme.
    ///
    /// - Throws: ``CourierError/Kind/invalidURL`` for a scheme other than HTTP(S), a missing or
    ///   malformed authority, or credentials in it.
    static func absoluteParts(of target: String) throws -> (scheme: String, authority: String, pathAndQuery: String)? {
        guard let colon = target.firstIndex(of: ":"),
            !target[..<colon].contains(where: { $0 == "/" || $0 == "?" || $0 == "#" }),
            isScheme(target[..<colon])
        else { return nil }
        let scheme = target[..<colon].lowercased()
        guard scheme == "http" || scheme == "https" else {
            throw CourierError(
                kind: .invalidURL,
                message: "only http and https URLs are supported, not \(ErrorText.sanitized(scheme, limit: 16))"
            )
        }
        let rest = target[target.index(after: colon)...]
        guard rest.hasPrefix("//") else {
            throw CourierError(kind: .invalidURL, message: "the URL has no `//` and host after its scheme")
        }
        let afterSlashes = rest.dropFirst(2)
        let end = afterSlashes.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? afterSlashes.endIndex
        let authority = String(afterSlashes[..<end])
        try checkAuthority(authority)
        var pathAndQuery = String(afterSlashes[end...])
        if !pathAndQuery.hasPrefix("/") { pathAndQuery = "/" + pathAndQuery }
        return (scheme, authority, pathAndQuery)
    }

    /// RFC 3986: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`.
    private static func isScheme(_ text: Substring) -> Bool {
        guard let first = text.utf8.first, isLetter(first) else { return false }
        return text.utf8.allSatisfy {
            isLetter($0) || isDigit($0) || $0 == UInt8(ascii: "+") || $0 == UInt8(ascii: "-") || $0 == UInt8(ascii: ".")
        }
    }

    /// Checks an absolute URL's authority with the one parser every host decision uses.
    private static func checkAuthority(_ authority: String) throws {
        let parsed: Authority
        do {
            parsed = try Authority(authority)
        } catch {
            // The reason never repeats the authority, which may hold a password.
            throw CourierError(kind: .invalidURL, message: "the URL's host and port are malformed: \(error)")
        }
        guard !parsed.hasUserInfo else {
            throw CourierError(
                kind: .invalidURL,
                message: "credentials in a URL are not allowed; Courier sends credentials itself"
            )
        }
    }

    /// Checks that every byte may appear in a request target (RFC 3986 `pchar`, `/`, `?`,
    /// and `%` followed by two hex digits). `offset` is where `target` starts in the text the
    /// caller gave, for the position a message names.
    private static func checkPathAndQuery(_ target: String, offset: Int) throws {
        let bytes = Array(target.utf8)
        var index = 0
        var part = "path"
        func refuse(_ problem: String) -> CourierError {
            CourierError(kind: .invalidURL, message: "the \(part) has \(problem)")
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "?") { part = "query" }
            if byte == UInt8(ascii: "#") {
                throw CourierError(
                    kind: .invalidURL,
                    message: "the path has a fragment (`#` at offset \(offset + index)), which is never sent"
                )
            }
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, isHexDigit(bytes[index + 1]), isHexDigit(bytes[index + 2]) else {
                    throw refuse("a `%` at offset \(offset + index) that is not followed by two hex digits")
                }
                index += 3
                continue
            }
            guard PercentEncoding.isUnreserved(byte) || isPathDelimiter(byte) else {
                let character = ErrorText.describe(characterAt: index, in: target)
                throw refuse("\(character) at offset \(offset + index), which must be percent-encoded")
            }
            index += 1
        }
    }

    /// RFC 3986 sub-delims, `:`, `@`, `/` and `?`.
    private static func isPathDelimiter(_ byte: UInt8) -> Bool {
        "!$&'()*+,;=:@/?".utf8.contains(byte)
    }

    private static func isLetter(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte | 0x20)
    }

    private static func isDigit(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isHexDigit(_ byte: UInt8) -> Bool {
        isDigit(byte) || (UInt8(ascii: "a")...UInt8(ascii: "f")).contains(byte | 0x20)
    }
}
