/// A host, or a wildcard for the hosts one label below a domain.
///
/// `api.example.com` matches that host only. `*.example.com` matches `api.example.com` and
/// `cdn.example.com`, but neither `example.com` nor `a.b.example.com` (one label, as in
/// RFC 6125 and OkHttp's single `*`). IP addresses match exactly.
struct HostPattern: Sendable, Hashable {
    /// The normal form: `api.example.com` or `*.example.com`.
    let text: String
    /// For a wildcard, `.example.com`; `nil` for an exact host.
    let wildcardSuffix: String?

    /// Parses and checks a pattern.
    ///
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` for an empty pattern, a `*`
    ///   anywhere but as the whole first label, a wildcard over fewer than two labels
    ///   (`*.com`), or a character that cannot be in a host name.
    init(_ pattern: String) throws {
        let text = Authority.normalizedHost(pattern.trimmingWhitespace())
        func invalid(_ why: String) -> CourierError {
            .invalidConfiguration("\(pattern.debugDescription) is not a host pattern: \(why)")
        }
        guard !text.isEmpty else { throw invalid("it is empty") }
        let allowed = text.utf8.allSatisfy { byte in
            (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte)
                || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_")
                || byte == UInt8(ascii: ":") || byte == UInt8(ascii: "*")
        }
        guard allowed else { throw invalid("give a host name or IP address without scheme, port or path") }
        if text.hasPrefix("*.") {
            let suffix = String(text.dropFirst(1))
            let labels = suffix.dropFirst().split(separator: ".", omittingEmptySubsequences: false)
            guard !suffix.contains("*"), labels.count >= 2, labels.allSatisfy({ !$0.isEmpty }), !suffix.contains(":")
            else {
                throw invalid("a wildcard is `*.` followed by a domain of at least two labels, such as *.example.com")
            }
            self.wildcardSuffix = suffix
        } else {
            guard !text.contains("*") else {
                throw invalid("`*` may only be the whole first label, as in *.example.com")
            }
            guard
                !text.split(separator: ".", omittingEmptySubsequences: false).contains(where: \.isEmpty)
                    || text.contains(":")
            else { throw invalid("it has an empty label") }
            self.wildcardSuffix = nil
        }
        self.text = text
    }

    /// Whether a normal host name matches.
    func matches(_ host: String) -> Bool {
        guard let wildcardSuffix else { return host == text }
        guard host.hasSuffix(wildcardSuffix) else { return false }
        let label = host.dropLast(wildcardSuffix.count)
        return !label.isEmpty && !label.contains(".")
    }
}

extension String {
    fileprivate func trimmingWhitespace() -> Substring {
        var text = Substring(self)
        while let first = text.first, first == " " || first == "\t" { text.removeFirst() }
        while let last = text.last, last == " " || last == "\t" { text.removeLast() }
        return text
    }
}
