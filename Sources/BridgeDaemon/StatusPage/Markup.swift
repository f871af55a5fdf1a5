import BridgeCore
import Foundation

/// The two ways the status page and the card drawings write payload text: as text or a quoted
/// attribute value (`escaped`), and as a link (`href`). Every value that reaches HTML or SVG goes
/// through one of them.
///
/// Why: job, workflow, branch and repository names, `head_sha` and the URLs in a payload are
/// chosen by anyone who can open a pull request, and the page is served on the admin origin,
/// which also serves raw payloads. One way out of an attribute is a script on that origin.
///
/// Both work per Unicode scalar or UTF-8 byte, never per `Character`: a `"` followed by a
/// combining mark (U+0301) or a ZWJ (U+200D) is one `Character` that is not equal to `"`, yet the
/// browser reads the quote byte and ends the attribute there.
public enum Markup {
    /// `text` safe in HTML and SVG content and inside a double- or single-quoted attribute value:
    /// `& < > " '` become entities, and control and bidi characters (other than TAB, LF and CR,
    /// which are whitespace to HTML) are shown as `\u{XX}`, as the CLI shows them: a NUL or an
    /// override would otherwise hide or reorder what an operator reads.
    public static func escaped(_ text: String) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": result += "&amp;"
            case "<": result += "&lt;"
            case ">": result += "&gt;"
            case "\"": result += "&quot;"
            case "'": result += "&#39;"
            case "\t", "\n", "\r": result.unicodeScalars.append(scalar)
            case _ where TerminalText.isControl(scalar): result += TerminalText.visible(scalar)
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    /// A payload URL as the value of a double-quoted `href`, ready to write: only an absolute
    /// `http:` or `https:` URL with a host is a link; anything else (`javascript:`, `data:`, a
    /// relative path, a URL that does not parse) becomes `#`.
    ///
    /// Every UTF-8 byte outside the characters URLs are made of (RFC 3986's unreserved and
    /// reserved characters and `%`) is percent-encoded before the check, so a quote, `<`, a space
    /// or a control can neither end the attribute nor hide in the link; the result is then
    /// escaped for the attribute (`&` and `'`).
    public static func href(_ url: String) -> String {
        guard
            url.utf8.starts(with: "https://".utf8, by: asciiCaseInsensitive)
                || url.utf8.starts(with: "http://".utf8, by: asciiCaseInsensitive)
        else { return "#" }
        let encoded = PercentEncoding.encoded(url, keeping: isURLByte)
        guard let parsed = URL(string: encoded), let scheme = parsed.scheme?.lowercased(),
            scheme == "https" || scheme == "http", let host = parsed.host, !host.isEmpty
        else { return "#" }
        return escaped(encoded)
    }

    static func asciiCaseInsensitive(_ byte: UInt8, _ expected: UInt8) -> Bool {
        (byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte) == expected
    }

    /// RFC 3986's punctuation (unreserved and reserved) and `%`, so already-encoded URLs stay as
    /// they are.
    static let urlPunctuation = Set("-._~:/?#[]@!$&'()*+,;=%".utf8)

    /// A letter, a digit or `urlPunctuation`.
    static func isURLByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default: urlPunctuation.contains(byte)
        }
    }
}
