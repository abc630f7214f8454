import Foundation

/// The cookie-date algorithm of RFC 6265bis §5.1.1: how an `Expires` attribute is read.
///
/// Lenient on purpose, as browsers are: the date is found among tokens split at any delimiter,
/// in any order (the first time, day of month, month and year found win), with two-digit years
/// (70–99 are 1970–1999, 0–69 are 2000–2069). A date that lacks a part or names an impossible
/// day, hour, minute or second, or a year before 1601, is no date.
enum CookieDate {
    /// The date `text` names, in UTC, or `nil` when it names none.
    static func parse(_ text: Substring) -> Date? {
        var time: (hour: Int, minute: Int, second: Int)?
        var day: Int?
        var month: Int?
        var year: Int?
        var tokenStart: String.UTF8View.Index?
        let bytes = text.utf8
        var index = bytes.startIndex
        while true {
            let atEnd = index == bytes.endIndex
            if !atEnd, !isDelimiter(bytes[index]) {
                if tokenStart == nil { tokenStart = index }
                index = bytes.index(after: index)
                continue
            }
            if let start = tokenStart {
                let token = bytes[start..<index]
                if time == nil, let found = parseTime(token) {
                    time = found
                } else if day == nil, let found = leadingDigits(token, minimum: 1, maximum: 2) {
                    day = found
                } else if month == nil, let found = parseMonth(token) {
                    month = found
                } else if year == nil, let found = leadingDigits(token, minimum: 2, maximum: 4) {
                    year = found
                }
                tokenStart = nil
            }
            if atEnd { break }
            index = bytes.index(after: index)
        }
        guard var year, let month, let day, let time else { return nil }
        if (70...99).contains(year) {
            year += 1900
        } else if (0...69).contains(year) {
            year += 2000
        }
        guard (1...31).contains(day), year >= 1601, time.hour <= 23, time.minute <= 59, time.second <= 59,
            day <= daysIn(month: month, year: year)
        else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        let seconds = days * 86_400 + time.hour * 3600 + time.minute * 60 + time.second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// The delimiters of §5.1.1: %x09 / %x20-2F / %x3B-40 / %x5B-60 / %x7B-7E.
    private static func isDelimiter(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x09, 0x20...0x2F, 0x3B...0x40, 0x5B...0x60, 0x7B...0x7E: true
        default: false
        }
    }

    /// Whether `byte` is an ASCII digit.
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }

    /// The number that `minimum`…`maximum` digits open `token` with, when no further digit
    /// follows them (`1*2DIGIT ( non-digit *OCTET )`).
    private static func leadingDigits(_ token: Substring.UTF8View, minimum: Int, maximum: Int) -> Int? {
        var value = 0
        var count = 0
        for byte in token {
            guard isDigit(byte) else { break }
            count += 1
            guard count <= maximum else { return nil }
            value = value * 10 + Int(byte - 0x30)
        }
        return count >= minimum ? value : nil
    }

    /// `hms-time ( non-digit *OCTET )`, with `hms-time = time-field ":" time-field ":" time-field`
    /// and `time-field = 1*2DIGIT`.
    private static func parseTime(_ token: Substring.UTF8View) -> (hour: Int, minute: Int, second: Int)? {
        var fields = [0, 0, 0]
        var field = 0
        var digits = 0
        var index = token.startIndex
        while index != token.endIndex {
            let byte = token[index]
            if isDigit(byte) {
                digits += 1
                guard digits <= 2 else { return nil }
                fields[field] = fields[field] * 10 + Int(byte - 0x30)
            } else if byte == UInt8(ascii: ":"), field < 2, digits > 0 {
                field += 1
                digits = 0
            } else {
                break
            }
            index = token.index(after: index)
        }
        guard field == 2, digits > 0 else { return nil }
        return (fields[0], fields[1], fields[2])
    }

    /// The month (1–12) whose three-letter English name opens `token`, in any case.
    private static func parseMonth(_ token: Substring.UTF8View) -> Int? {
        var letters: [UInt8] = []
        for byte in token.prefix(3) { letters.append(byte | 0x20) }  // ASCII letters to lower case
        guard letters.count == 3 else { return nil }
        let names = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
        return names.firstIndex { Array($0.utf8) == letters }.map { $0 + 1 }
    }

    /// The days of `month` in `year` of the proleptic Gregorian calendar.
    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// The days from 1970-01-01 to the date, negative before it (Howard Hinnant's
    /// days-from-civil).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
