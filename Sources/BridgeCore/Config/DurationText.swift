/// Durations as configuration writes them: `"90s"`, `"15m"`, `"1h30m"`, `"3d"`, or whole seconds.
public enum DurationText {
    /// Seconds, or nil when the text is not a duration. `"0"` and `"0s"` are zero.
    public static func seconds(_ text: String) -> Int? {
        if let whole = Int(text), whole >= 0 { return whole }
        var total = 0
        var digits = ""
        var sawUnit = false
        for character in text {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            let unit: Int
            switch character {
            case "d": unit = 86_400
            case "h": unit = 3_600
            case "m": unit = 60
            case "s": unit = 1
            default: return nil
            }
            guard let value = Int(digits) else { return nil }
            let (product, overflow) = value.multipliedReportingOverflow(by: unit)
            guard !overflow else { return nil }
            let (sum, sumOverflow) = total.addingReportingOverflow(product)
            guard !sumOverflow else { return nil }
            total = sum
            digits = ""
            sawUnit = true
        }
        return sawUnit && digits.isEmpty ? total : nil
    }

    /// `seconds` written back the way configuration writes durations: `"45d"`, `"1d12h"`,
    /// `"90s"` becomes `"1m30s"`; `"0s"` for zero. For messages that quote a setting.
    public static func text(_ seconds: Int) -> String {
        guard seconds > 0 else { return "0s" }
        var rest = seconds
        var text = ""
        for (unit, suffix) in [(86_400, "d"), (3_600, "h"), (60, "m"), (1, "s")] where rest >= unit {
            text += "\(rest / unit)\(suffix)"
            rest %= unit
        }
        return text
    }
}
