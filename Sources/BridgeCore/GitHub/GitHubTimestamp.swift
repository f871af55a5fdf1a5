import Foundation

/// Parses the RFC 3339 timestamps GitHub puts in webhook payloads into `UnixTime`.
///
/// Hand-written rather than `DateFormatter`/`ISO8601DateFormatter` because a delivery carries
/// dozens of timestamps (two per step), the formatters are slow and locale-sensitive, and their
/// behaviour differs between Apple platforms and swift-corelibs-foundation. Pure integer arithmetic
/// on the UTF-8 bytes gives the same answer everywhere and never allocates.
///
/// Accepted: `2023-10-13T10:11:52Z`, fractional seconds (`2023-10-13T10:11:52.000Z`, any number of
/// digits) and numeric offsets (`+00:00`, `-07:00`, as the REST API sends). Anything else —
/// missing parts, out-of-range fields, trailing text — is nil: the caller decides whether that is
/// an error.
public enum GitHubTimestamp {
    public static func parse(_ text: String) -> UnixTime? {
        // A copy of some 20 bytes: cheap beside the decoding that produced the string, and it
        // keeps unsafe pointers out of the code that reads what GitHub sends.
        var cursor = Cursor(bytes: Array(text.utf8))
        guard let year = cursor.digits(4), cursor.consume(UInt8(ascii: "-")),
            let month = cursor.digits(2), cursor.consume(UInt8(ascii: "-")),
            let day = cursor.digits(2),
            cursor.consume(UInt8(ascii: "T")) || cursor.consume(UInt8(ascii: "t")),
            let hour = cursor.digits(2), cursor.consume(UInt8(ascii: ":")),
            let minute = cursor.digits(2), cursor.consume(UInt8(ascii: ":")),
            let second = cursor.digits(2)
        else { return nil }
        // Second 60 is allowed because RFC 3339 allows leap seconds; it rolls into the next minute.
        guard (1...12).contains(month), (1...daysInMonth(year: year, month: month)).contains(day),
            hour <= 23, minute <= 59, second <= 60
        else { return nil }

        var fraction = 0.0
        if cursor.consume(UInt8(ascii: ".")) {
            guard let value = cursor.fraction() else { return nil }
            fraction = value
        }

        let offsetSeconds: Int
        if cursor.consume(UInt8(ascii: "Z")) || cursor.consume(UInt8(ascii: "z")) {
            offsetSeconds = 0
        } else if let sign = cursor.sign() {
            guard let offsetHour = cursor.digits(2), cursor.consume(UInt8(ascii: ":")),
                let offsetMinute = cursor.digits(2), offsetHour <= 23, offsetMinute <= 59
            else { return nil }
            offsetSeconds = sign * (offsetHour * 3600 + offsetMinute * 60)
        } else {
            return nil
        }
        guard cursor.isAtEnd else { return nil }

        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + second - offsetSeconds
        return UnixTime(seconds) + fraction
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`):
    /// shifts the year to start in March so the leap day is last, then counts 400-year eras.
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let shiftedYear = month <= 2 ? year - 1 : year
        let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
        let yearOfEra = shiftedYear - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }

    static func daysInMonth(year: Int, month: Int) -> Int {
        switch month {
        case 2:
            let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return isLeap ? 29 : 28
        case 4, 6, 9, 11:
            return 30
        default:
            return 31
        }
    }

    /// A read position in the timestamp's bytes.
    private struct Cursor {
        let bytes: [UInt8]
        var index = 0

        var isAtEnd: Bool { index == bytes.count }

        mutating func consume(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// Exactly `count` ASCII digits as a number.
        mutating func digits(_ count: Int) -> Int? {
            guard bytes.count - index >= count else { return nil }
            var value = 0
            for offset in 0..<count {
                let digit = Int(bytes[index + offset]) - 48
                guard (0...9).contains(digit) else { return nil }
                value = value * 10 + digit
            }
            index += count
            return value
        }

        /// One or more digits after the decimal point, as a fraction of a second. Digits past the
        /// ninth (below a nanosecond) are checked but not counted: a Double cannot hold them anyway.
        mutating func fraction() -> Double? {
            var numerator = 0
            var denominator = 1
            let start = index
            while index < bytes.count {
                let digit = Int(bytes[index]) - 48
                guard (0...9).contains(digit) else { break }
                if index - start < 9 {
                    numerator = numerator * 10 + digit
                    denominator *= 10
                }
                index += 1
            }
            guard index > start else { return nil }
            return Double(numerator) / Double(denominator)
        }

        /// `+1` or `-1` for an offset sign, consuming it; nil (and nothing consumed) otherwise.
        mutating func sign() -> Int? {
            if consume(UInt8(ascii: "+")) { return 1 }
            if consume(UInt8(ascii: "-")) { return -1 }
            return nil
        }
    }

    /// `2023-10-13T10:11:52Z` (with `.123` milliseconds when asked): GitHub's own format, used for
    /// logs and for payloads the tests build.
    public static func format(_ time: UnixTime, milliseconds: Bool = false) -> String {
        let totalMilliseconds = Int((time * 1000).rounded(.down))
        let seconds = totalMilliseconds >= 0 ? totalMilliseconds / 1000 : (totalMilliseconds - 999) / 1000
        let days = seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400
        let secondOfDay = seconds - days * 86_400
        // Howard Hinnant's civil-from-days, the inverse of `daysFromCivil`.
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let monthPrime = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * monthPrime + 2) / 5 + 1
        let month = monthPrime < 10 ? monthPrime + 3 : monthPrime - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var text = String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d", year, month, day, secondOfDay / 3600, secondOfDay / 60 % 60,
            secondOfDay % 60)
        if milliseconds { text += String(format: ".%03d", totalMilliseconds - seconds * 1000) }
        return text + "Z"
    }
}
