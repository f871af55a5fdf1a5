import BridgeCore
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// How a log line is written: one JSON object (what journald and collectors keep and parse), or
/// `time level message key=value …` for a person watching a terminal.
///
/// Both escape what a payload could smuggle in: JSON by its string escapes, text by quoting any
/// value with a space, quote, `=` or backslash and writing every control and bidi character as a
/// visible `\u{1B}`-style escape (`TerminalText`), so a branch name can neither fake a line nor
/// move the cursor, in the message, a key or a value.
public enum LogFormat: String, Sendable, CaseIterable {
    case text, json

    /// `log_format` as configured, else text when standard error is a terminal, JSON otherwise.
    public static func chosen(configured: String?, standardErrorIsTerminal: Bool = isatty(STDERR_FILENO) == 1)
        -> LogFormat
    {
        configured.flatMap(LogFormat.init(rawValue:)) ?? (standardErrorIsTerminal ? .text : .json)
    }

    /// One line, without its newline.
    public func line(
        time: Date, level: Logger.Level, label: String, message: String, metadata: [String: JSONValue]
    ) -> String {
        switch self {
        case .json:
            var object = metadata
            object["ts"] = .string(Logger.timestamp(time))
            object["level"] = .string(level.rawValue)
            object["logger"] = .string(label)
            object["msg"] = .string(message)
            return JSONValue.object(object).canonicalString
        case .text:
            var line =
                Logger.timestamp(time) + " "
                + level.rawValue.uppercased().padding(toLength: 7, withPad: " ", startingAt: 0)
                + " " + TerminalText.sanitized(message)
            for key in metadata.keys.sorted() {
                guard let value = metadata[key] else { continue }
                line += " " + Self.quoted(key) + "=" + Self.text(value)
            }
            return line
        }
    }

    /// A value as text: a string as it is (quoted when it must be), anything else as JSON.
    static func text(_ value: JSONValue) -> String {
        if case .string(let string) = value { return quoted(string) }
        return TerminalText.sanitized(value.canonicalString)
    }

    /// `string` bare when that reads unambiguously, else in double quotes with `"` and `\`
    /// escaped; controls and bidi characters escaped either way.
    static func quoted(_ string: String) -> String {
        let bare =
            !string.isEmpty
            && !string.unicodeScalars.contains {
                $0 == " " || $0 == "\"" || $0 == "=" || $0 == "\\" || TerminalText.isControl($0)
                    || $0.properties.isWhitespace
            }
        if bare { return string }
        let escaped = string.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"" + TerminalText.sanitized(escaped) + "\""
    }
}
