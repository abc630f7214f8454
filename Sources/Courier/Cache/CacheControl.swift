import Foundation
import HTTPTypes

/// The directives of the `Cache-Control` fields of a request or a response (RFC 9111 §5.2).
///
/// Every `Cache-Control` field line counts, in order. Directive names ignore case; an argument
/// may be a token or a quoted string (`max-age="60"` is read as `max-age=60`); unknown
/// directives are ignored. A directive with seconds that are not a number is read the safe way:
/// a `max-age` (of a request or a response) or `s-maxage` as 0, so the response is stale; a
/// `min-fresh`, `max-stale`, `stale-while-revalidate` or `stale-if-error` as absent. When a
/// directive with seconds comes twice with different values, a response's freshness directive
/// is read as 0 (RFC 9111 §4.2.1 lets a cache consider such a response stale) and any other
/// keeps its first value. Seconds past 2³¹ are read as 2³¹ (§1.2.2).
struct CacheControl: Sendable, Hashable {
    /// `max-age`: how long a response is fresh, or the oldest response a request accepts.
    var maxAge: Int?
    /// `s-maxage`: the freshness for shared caches. A private cache ignores it for freshness, and
    /// it lets a shared partition store a response.
    var sharedMaxAge: Int?
    /// `no-store`: neither the request nor its response is stored.
    var noStore = false
    /// `no-cache`: a stored response is validated before each use (for a request: the caller
    /// wants no stored response used without validation). A list of field names is read as
    /// the directive without one.
    var noCache = false
    /// `private`: only a cache of one user may store the response. A list of field names is read
    /// as the directive without one.
    var isPrivate = false
    /// `public`: a shared cache may store the response.
    var isPublic = false
    /// `must-revalidate`: once stale, the response is never used without validation.
    var mustRevalidate = false
    /// `max-stale`: how stale a response the request accepts; `Int.max` when it names no limit.
    var maxStale: Int?
    /// `min-fresh`: how much longer a response must stay fresh for the request to accept it.
    var minFresh: Int?
    /// `only-if-cached`: the request wants a stored response or a 504, never the network.
    var onlyIfCached = false
    /// `stale-while-revalidate` (RFC 5861): how long after it goes stale the response may be
    /// served at once while it is validated in the background.
    var staleWhileRevalidate: Int?
    /// `stale-if-error` (RFC 5861): how long after it goes stale the response may be served
    /// when validation fails.
    var staleIfError: Int?

    /// The largest number of seconds a directive holds (RFC 9111 §1.2.2).
    static let maximumSeconds = 2_147_483_648

    /// No directive.
    init() {}

    /// The directives of every `Cache-Control` field line of `fields`.
    ///
    /// - Parameter fields: The header fields of a request or a response.
    init(_ fields: HTTPFields) {
        self.init()
        var seen = Set<String>()
        for line in fields[values: .cacheControl] {
            for (name, argument) in Self.directives(in: line) {
                apply(name, argument, repeated: !seen.insert(name).inserted)
            }
        }
    }

    /// The directives of one field value.
    ///
    /// - Parameter value: A `Cache-Control` field value, such as `max-age=60, private`.
    init(parsing value: String) {
        var fields = HTTPFields()
        fields[.cacheControl] = value
        self.init(fields)
    }

    /// Sets the directive `name` with its `argument`; `repeated` when it came before.
    private mutating func apply(_ name: String, _ argument: String?, repeated: Bool) {
        switch name {
        case "max-age": maxAge = Self.freshness(argument, old: maxAge, repeated: repeated)
        case "s-maxage": sharedMaxAge = Self.freshness(argument, old: sharedMaxAge, repeated: repeated)
        case "no-store": noStore = true
        case "no-cache": noCache = true
        case "private": isPrivate = true
        case "public": isPublic = true
        case "must-revalidate": mustRevalidate = true
        case "only-if-cached": onlyIfCached = true
        case "max-stale":
            guard !repeated else { return }
            maxStale = argument == nil ? Int.max : Self.seconds(argument)
        case "min-fresh": if !repeated { minFresh = Self.seconds(argument) }
        case "stale-while-revalidate": if !repeated { staleWhileRevalidate = Self.seconds(argument) }
        case "stale-if-error": if !repeated { staleIfError = Self.seconds(argument) }
        default: break
        }
    }

    /// A freshness directive's value: 0 when it is not a number or contradicts an earlier one.
    private static func freshness(_ argument: String?, old: Int?, repeated: Bool) -> Int {
        let value = seconds(argument) ?? 0
        guard repeated, let old else { return value }
        return old == value ? value : 0
    }

    /// Delta-seconds (RFC 9111 §1.2.2): ASCII digits, capped at ``maximumSeconds``; `nil` for
    /// anything else.
    static func seconds(_ text: String?) -> Int? {
        guard let text, !text.isEmpty else { return nil }
        var value = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = min(value * 10 + Int(byte - UInt8(ascii: "0")), maximumSeconds)
        }
        return value
    }

    /// The directives of one field value, each as its lower-cased name and its argument (a
    /// quoted string unquoted), in order.
    static func directives(in value: String) -> [(name: String, argument: String?)] {
        var result: [(name: String, argument: String?)] = []
        var scanner = DirectiveScanner(value)
        while let directive = scanner.next() { result.append(directive) }
        return result
    }
}

/// Reads the comma-separated `name[=argument]` items of a `Cache-Control` value, skipping empty
/// items and honouring quoted strings, in which a comma does not end the item.
private struct DirectiveScanner {
    private let bytes: [UInt8]
    private var index = 0

    init(_ value: String) { bytes = Array(value.utf8) }

    /// The next directive, or `nil` at the end.
    mutating func next() -> (name: String, argument: String?)? {
        while index < bytes.count {
            skip { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
            let name = take { $0 != UInt8(ascii: "=") && $0 != UInt8(ascii: ",") }
                .trimmingCharacters(in: .whitespaces).lowercased()
            var argument: String?
            if index < bytes.count, bytes[index] == UInt8(ascii: "=") {
                index += 1
                skip { $0 == UInt8(ascii: " ") || $0 == UInt8(ascii: "\t") }
                argument = index < bytes.count && bytes[index] == UInt8(ascii: "\"") ? quoted() : token()
            }
            skip { $0 != UInt8(ascii: ",") }
            if !name.isEmpty { return (name, argument) }
        }
        return nil
    }

    private mutating func skip(while condition: (UInt8) -> Bool) {
        while index < bytes.count, condition(bytes[index]) { index += 1 }
    }

    private mutating func take(while condition: (UInt8) -> Bool) -> String {
        let start = index
        skip(while: condition)
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    /// A token argument, up to the next comma, without surrounding whitespace.
    private mutating func token() -> String {
        take { $0 != UInt8(ascii: ",") }.trimmingCharacters(in: .whitespaces)
    }

    /// A quoted-string argument without its quotes, a backslash escaping the next byte.
    private mutating func quoted() -> String {
        index += 1
        var result: [UInt8] = []
        while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
            if bytes[index] == UInt8(ascii: "\\"), index + 1 < bytes.count { index += 1 }
            result.append(bytes[index])
            index += 1
        }
        index = min(index + 1, bytes.count)
        return String(decoding: result, as: UTF8.self)
    }
}
