import Foundation

/// Reads a `Retry-After` field value (RFC 9110 §10.2.3).
///
/// Both forms are understood: delta-seconds (`120`) and an HTTP-date in any of the three
/// formats a recipient must accept (RFC 9110 §5.6.7): `Sun, 06 Nov 1994 08:49:37 GMT`,
/// `Sunday, 06-Nov-94 08:49:37 GMT` and `Sun Nov  6 08:49:37 1994`.
///
/// The result is not capped: each caller caps it to what it is willing to wait.
enum RetryAfter {
    /// How long to wait before the next attempt, as `value` asks.
    ///
    /// - Parameters:
    ///   - value: The field value, surrounding whitespace allowed.
    ///   - now: The current time, against which a date is measured.
    /// - Returns: The delay (to the millisecond); `.zero` for a date that has passed; `nil` for a negative
    ///   number, a fraction or anything else that is neither form. A number of seconds too
    ///   large to represent saturates at `Int64.max` seconds.
    static func delay(_ value: String, now: Date) -> Duration? {
        let text = value.trimmingCharacters(in: .whitespaces)
        guard !text.isEmpty else { return nil }
        if text.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return .seconds(Int64(text) ?? Int64.max)
        }
        guard let date = httpDate(text, now: now) else { return nil }
        let interval = date.timeIntervalSince(now)
        return interval > 0 ? .milliseconds(Int64((interval * 1000).rounded())) : .zero
    }

    private static let months = [
        "jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec",
    ]
    private static let shortDays: Set<String> = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays: Set<String> = [
        "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday",
    ]

    /// An HTTP-date in one of its three formats; `nil` for anything else.
    static func httpDate(_ text: String, now: Date) -> Date? {
        let words = text.split(separator: " ", omittingEmptySubsequences: true).map { $0.lowercased() }
        guard let first = words.first else { return nil }
        if first.hasSuffix(",") {
            let day = String(first.dropLast())
            if shortDays.contains(day), words.count == 6, words[5] == "gmt" {
                // IMF-fixdate: Sun, 06 Nov 1994 08:49:37 GMT
                guard words[1].count == 2, words[3].count == 4, let year = Int(words[3]) else { return nil }
                return date(year: year, month: words[2], day: words[1], time: words[4])
            }
            if longDays.contains(day), words.count == 4, words[3] == "gmt" {
                // rfc850-date: Sunday, 06-Nov-94 08:49:37 GMT
                let parts = words[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
                guard parts.count == 3, parts[0].count == 2, parts[2].count == 2, let short = Int(parts[2]) else {
                    return nil
                }
                return date(year: fullYear(short, now: now), month: parts[1], day: parts[0], time: words[2])
            }
            return nil
        }
        // asctime-date: Sun Nov  6 08:49:37 1994
        guard shortDays.contains(first), words.count == 5, words[2].count <= 2, words[4].count == 4,
            let year = Int(words[4])
        else { return nil }
        return date(year: year, month: words[1], day: words[2], time: words[3])
    }

    /// A two-digit year as RFC 9110 reads it: one that would be more than 50 years in the
    /// future is the most recent past year with those digits.
    private static func fullYear(_ short: Int, now: Date) -> Int {
        let current = calendar.component(.year, from: now)
        var year = current - current % 100 + short
        if year > current + 50 { year -= 100 }
        return year
    }

    private static let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "GMT")!
        return calendar
    }()

    private static func date(year: Int, month: String, day: String, time: String) -> Date? {
        guard let monthIndex = months.firstIndex(of: month), day.allSatisfy(\.isASCIIDigit),
            let dayNumber = Int(day)
        else { return nil }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 && $0.allSatisfy(\.isASCIIDigit) }),
            let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            hour < 24, minute < 60, second < 61, (1...31).contains(dayNumber)
        else { return nil }
        let components = DateComponents(
            year: year,
            month: monthIndex + 1,
            day: dayNumber,
            hour: hour,
            minute: minute,
            second: min(second, 59)
        )
        guard let date = calendar.date(from: components),
            calendar.component(.day, from: date) == dayNumber  // no 31 Feb rolled into March
        else { return nil }
        return date
    }
}

extension Character {
    /// Whether the character is one of the ASCII digits 0–9.
    fileprivate var isASCIIDigit: Bool { isASCII && isNumber }
}
