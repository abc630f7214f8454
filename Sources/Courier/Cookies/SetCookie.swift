import Foundation

/// One `Set-Cookie` field value, parsed as RFC 6265bis §5.6 says, before the jar decides
/// whether to store it (§5.7).
///
/// Parsing never fails loudly: a field the algorithm ignores is `nil`, an attribute it ignores
/// is left out. Of an attribute given more than once the last counts.
struct SetCookie: Sendable, Hashable {
    /// The cookie's name, trimmed of spaces and tabs; may be empty.
    var name: String
    /// The cookie's value, trimmed of spaces and tabs.
    var value: String
    /// When the cookie expires: from `Max-Age` when it has one, else from `Expires`; `nil` for
    /// a session cookie. A date at or before the time of parsing means "delete".
    var expires: Date?
    /// The `Domain` attribute, lower case, without a leading dot; `nil` when absent.
    var domain: String?
    /// The `Path` attribute when it starts with `/`; `nil` when absent or not.
    var path: String?
    /// Whether the field had `Secure`.
    var isSecure = false
    /// Whether the field had `HttpOnly`.
    var isHTTPOnly = false
    /// The `SameSite` attribute, when it names a known enforcement.
    var sameSite: Cookie.SameSite?

    /// Parses `text` received at `now` under `limits`, or returns `nil` when the field is
    /// ignored: a control character, no name and no value, or a name and value longer than
    /// ``CookieJar/Limits/maximumNameAndValueBytes``.
    init?(_ text: String, now: Date, limits: CookieJar.Limits) {
        // §5.6 step 1: a control character other than a tab ignores the whole field.
        guard !text.utf8.contains(where: { ($0 < 0x20 && $0 != 0x09) || $0 == 0x7F }) else { return nil }
        let bytes = text.utf8
        let pairEnd = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        let pair = Substring(text)[..<pairEnd]
        if let equals = pair.utf8.firstIndex(of: UInt8(ascii: "=")) {
            name = Self.trimmed(pair[..<equals])
            value = Self.trimmed(pair[pair.index(after: equals)...])
        } else {
            name = ""
            value = Self.trimmed(pair)
        }
        guard !(name.isEmpty && value.isEmpty), name.utf8.count + value.utf8.count <= limits.maximumNameAndValueBytes
        else { return nil }

        var maxAge: Date?
        var rest = Substring(text)[pairEnd...]
        while !rest.isEmpty {
            rest = rest.dropFirst()  // the ";"
            let end = rest.utf8.firstIndex(of: UInt8(ascii: ";")) ?? rest.endIndex
            let attribute = rest[..<end]
            rest = rest[end...]
            let attributeName: String
            let attributeValue: String
            if let equals = attribute.utf8.firstIndex(of: UInt8(ascii: "=")) {
                attributeName = Self.trimmed(attribute[..<equals])
                attributeValue = Self.trimmed(attribute[attribute.index(after: equals)...])
            } else {
                attributeName = Self.trimmed(attribute)
                attributeValue = ""
            }
            guard attributeValue.utf8.count <= limits.maximumAttributeValueBytes else { continue }
            switch attributeName.lowercased() {
            case "expires":
                if let date = CookieDate.parse(Substring(attributeValue)) {
                    expires = Self.capped(date, now: now, limits: limits)
                }
            case "max-age":
                if let seconds = Self.deltaSeconds(attributeValue) {
                    maxAge =
                        seconds <= 0
                        ? Date.distantPast
                        : now.addingTimeInterval(min(Double(seconds), limits.maximumAge.inSeconds))
                }
            case "domain":
                guard !attributeValue.isEmpty else { continue }
                var domain = Substring(attributeValue)
                if domain.hasPrefix(".") { domain = domain.dropFirst() }
                self.domain = domain.lowercased()
            case "path":
                path = attributeValue.hasPrefix("/") ? attributeValue : nil
            case "secure":
                isSecure = true
            case "httponly":
                isHTTPOnly = true
            case "samesite":
                sameSite = Cookie.SameSite(rawValue: attributeValue.lowercased())
            default:
                continue  // an unknown attribute is ignored
            }
        }
        if let maxAge { expires = maxAge }
    }

    /// `text` without the spaces and tabs around it.
    static func trimmed(_ text: Substring) -> String {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let first = text.firstIndex(where: { !isBlank($0) }), let last = text.lastIndex(where: { !isBlank($0) })
        else { return "" }
        return String(text[first...last])
    }

    /// A `Max-Age` value: digits with an optional leading `-`, or `nil` for anything else.
    /// Too large a number is the largest one.
    static func deltaSeconds(_ text: String) -> Int? {
        var digits = Substring(text)
        let negative = digits.hasPrefix("-")
        if negative { digits = digits.dropFirst() }
        guard !digits.isEmpty, digits.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        guard let value = Int(digits) else { return negative ? Int.min : Int.max }
        return negative ? -value : value
    }

    /// `date`, no later than ``CookieJar/Limits/maximumAge`` after `now`.
    private static func capped(_ date: Date, now: Date, limits: CookieJar.Limits) -> Date {
        min(date, now.addingTimeInterval(limits.maximumAge.inSeconds))
    }
}
