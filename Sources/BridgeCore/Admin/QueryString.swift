import Foundation

/// A request's query string read as the admin listener reads it: `a=1&b=2` as a dictionary,
/// percent-decoded, `+` as a space.
///
/// Total on purpose: the query is whatever any web page the operator opens chose to send to a
/// loopback listener (`<img src="http://127.0.0.1:9090/api/runs?=">`), so no text may trap here.
/// A pair without `=` has an empty value, a pair with an empty name is skipped, the last of a
/// repeated name wins, and a percent escape that does not decode (`%zz`, a lone `%`, bytes that are
/// not UTF-8) leaves that part as it was sent.
public enum QueryString {
    /// The items of `query` (the raw text after the first `?`, or nil for none).
    public static func items(_ query: String?) -> [String: String] {
        var items: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&", omittingEmptySubsequences: true) {
            let name: Substring
            let value: Substring
            if let equals = pair.firstIndex(of: "=") {
                name = pair[..<equals]
                value = pair[pair.index(after: equals)...]
            } else {
                name = pair
                value = ""
            }
            let key = decoded(name)
            guard !key.isEmpty else { continue }
            items[key] = decoded(value)
        }
        return items
    }

    /// `text` with `+` as a space and its percent escapes decoded, or as sent (with `+` still
    /// read as a space) when an escape does not decode.
    public static func decoded(_ text: Substring) -> String {
        let spaced = text.replacingOccurrences(of: "+", with: " ")
        return spaced.removingPercentEncoding ?? spaced
    }

    /// A path segment percent-decoded (`+` stays a `+`, as in a path), or as sent when an escape does
    /// not decode.
    public static func decodedSegment(_ text: Substring) -> String {
        String(text).removingPercentEncoding ?? String(text)
    }

    /// The `limit` item within `1...maximum`: a value that is not a positive decimal number gets
    /// `fallback` (this is a page people type by hand, so a bad value is not an error), and a number
    /// too large for an `Int` is `maximum`, like any other number over it.
    public static func limit(_ items: [String: String], default fallback: Int, maximum: Int) -> Int {
        guard let text = items["limit"], !text.isEmpty, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
            return fallback
        }
        guard let value = Int(text) else { return maximum }
        return value > 0 ? min(value, maximum) : fallback
    }
}
