import Foundation

/// Reads a `Retry-After` field value (RFC 9110 §10.2.3).
enum RetryAfter {
    /// How long `value` asks the client to wait, counted from `now`.
    ///
    /// - Parameters:
    ///   - value: The field value: delta-seconds (`120`) or an HTTP-date in the preferred
    ///     IMF-fixdate form (`Sun, 06 Nov 1994 08:49:37 GMT`) or one of the obsolete forms,
    ///     RFC 850 (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
    ///     Surrounding whitespace is ignored.
    ///   - now: The time the response arrived.
    /// - Returns: The delay; `.zero` for a date in the past; `nil` for anything else (a
    ///   negative or fractional number, an invalid date, garbage). Delta-seconds too large for
    ///   a `Duration` are the largest delay it holds.
    static func delay(_ value: String, now: Date) -> Duration? {
        let text = value.utf8.drop { $0 == .space || $0 == .tab }.reversed().drop { $0 == .space || $0 == .tab }
        let bytes = Array(text.reversed())
        guard let first = bytes.first else { return nil }
        if first.isDigit {
            var seconds: Int64 = 0
            for byte in bytes {
                guard byte.isDigit else { return nil }
                let (times, overflow1) = seconds.multipliedReportingOverflow(by: 10)
                let (sum, overflow2) = times.addingReportingOverflow(Int64(byte - .zero))
                if overflow1 || overflow2 { return .seconds(Int64.max) }
                seconds = sum
            }
            return .seconds(seconds)
        }
        guard let date = HTTPDate(bytes, now: now) else { return nil }
        let interval = date.timeIntervalSince1970 - now.timeIntervalSince1970
        guard interval > 0 else { return .zero }
        return .nanoseconds(Int64((interval * 1e9).rounded(.up)))
    }
}

/// A parsed HTTP-date, in any of the three forms RFC 9110 §5.6.7 accepts.
private struct HTTPDate {
    let timeIntervalSince1970: Double

    private static let months: [[UInt8]] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ].map { Array($0.utf8) }
    private static let shortDays: [[UInt8]] = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"].map { Array($0.utf8) }
    private static let longDays: [[UInt8]] = [
        "Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday",
    ].map { Array($0.utf8) }

    init?(_ bytes: [UInt8], now: Date) {
        var scanner = Scanner(bytes: bytes)
        if let comma = bytes.firstIndex(of: .comma) {
            let day = Array(bytes[..<comma])
            scanner.position = comma + 1
            guard scanner.skip(.space) else { return nil }
            if Self.shortDays.contains(day) {
                // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`
                guard let mday = scanner.digits(2), scanner.skip(.space), let month = scanner.month(Self.months),
                    scanner.skip(.space), let year = scanner.digits(4), scanner.skip(.space),
                    let time = scanner.time(), scanner.skip(.space), scanner.literal("GMT"), scanner.atEnd
                else { return nil }
                self.init(year: year, month: month, day: mday, time: time)
            } else if Self.longDays.contains(day) {
                // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`
                guard let mday = scanner.digits(2), scanner.skip(.hyphen), let month = scanner.month(Self.months),
                    scanner.skip(.hyphen), let shortYear = scanner.digits(2), scanner.skip(.space),
                    let time = scanner.time(), scanner.skip(.space), scanner.literal("GMT"), scanner.atEnd
                else { return nil }
                self.init(year: Self.fullYear(shortYear, now: now), month: month, day: mday, time: time)
            } else {
                return nil
            }
        } else {
            // asctime: `Sun Nov  6 08:49:37 1994` (the day padded with a space)
            guard bytes.count >= 3, Self.shortDays.contains(Array(bytes[0..<3])) else { return nil }
            scanner.position = 3
            guard scanner.skip(.space), let month = scanner.month(Self.months), scanner.skip(.space) else {
                return nil
            }
            let mday: Int
            if scanner.skip(.space) {
                guard let digit = scanner.digits(1) else { return nil }
                mday = digit
            } else {
                guard let digits = scanner.digits(2) else { return nil }
                mday = digits
            }
            guard scanner.skip(.space), let time = scanner.time(), scanner.skip(.space),
                let year = scanner.digits(4), scanner.atEnd
            else { return nil }
            self.init(year: year, month: month, day: mday, time: time)
        }
    }

    private init?(year: Int, month: Int, day: Int, time: (hour: Int, minute: Int, second: Int)) {
        guard day >= 1, day <= Self.daysIn(month: month, year: year), time.hour <= 23, time.minute <= 59,
            time.second <= 60
        else { return nil }
        let days = Self.daysFromCivil(year: year, month: month, day: day)
        timeIntervalSince1970 = Double(days * 86_400 + time.hour * 3_600 + time.minute * 60 + time.second)
    }

    /// A two-digit RFC 850 year: the one in this century, unless that is more than 50 years
    /// ahead of `now`, then the one a century earlier (RFC 9110 §5.6.7).
    private static func fullYear(_ shortYear: Int, now: Date) -> Int {
        let currentYear =
            Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: now)
            .year ?? 2000
        var year = currentYear - currentYear % 100 + shortYear
        if year > currentYear + 50 { year -= 100 }
        return year
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
    private static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}

/// Reads an HTTP-date byte by byte.
private struct Scanner {
    let bytes: [UInt8]
    var position = 0

    var atEnd: Bool { position == bytes.count }

    mutating func skip(_ byte: UInt8) -> Bool {
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    mutating func literal(_ text: String) -> Bool {
        let expected = Array(text.utf8)
        guard bytes.count - position >= expected.count,
            Array(bytes[position..<position + expected.count]) == expected
        else { return false }
        position += expected.count
        return true
    }

    /// Exactly `count` digits.
    mutating func digits(_ count: Int) -> Int? {
        guard bytes.count - position >= count else { return nil }
        var value = 0
        for byte in bytes[position..<position + count] {
            guard byte.isDigit else { return nil }
            value = value * 10 + Int(byte - .zero)
        }
        position += count
        return value
    }

    /// A three-letter month name, as 1–12.
    mutating func month(_ names: [[UInt8]]) -> Int? {
        guard bytes.count - position >= 3,
            let index = names.firstIndex(of: Array(bytes[position..<position + 3]))
        else { return nil }
        position += 3
        return index + 1
    }

    /// `HH:MM:SS`.
    mutating func time() -> (hour: Int, minute: Int, second: Int)? {
        guard let hour = digits(2), skip(.colon), let minute = digits(2), skip(.colon), let second = digits(2) else {
            return nil
        }
        return (hour, minute, second)
    }
}

extension UInt8 {
    fileprivate static let space = UInt8(ascii: " ")
    fileprivate static let tab = UInt8(ascii: "\t")
    fileprivate static let comma = UInt8(ascii: ",")
    fileprivate static let hyphen = UInt8(ascii: "-")
    fileprivate static let colon = UInt8(ascii: ":")
    fileprivate static let zero = UInt8(ascii: "0")

    fileprivate var isDigit: Bool { self >= UInt8(ascii: "0") && self <= UInt8(ascii: "9") }
}
