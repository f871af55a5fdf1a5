/// Payload text as part of a URL path, for the URLs the bridge builds itself (a commit's page
/// from `head_sha`, a repository's from its `full_name`).
///
/// Why: those parts come from whoever pushed the commit or named the repository. Written raw, a
/// `head_sha` holding `"`, `<`, `/`, `?` or `#` would end the URL's path early or add segments, a
/// query or a fragment, and an attribute built from it could be broken out of. Encoded, the part
/// stays one segment whatever it holds.
///
/// Works per UTF-8 byte: only RFC 3986's unreserved bytes (`A–Z a–z 0–9 - . _ ~`) pass, every
/// other byte becomes `%XX`. Per byte, a combining mark after a quote cannot hide the quote, as it
/// can when text is handled per `Character`. No Foundation: the core stays pure.
public enum PercentEncoding {
    /// The value of one hex digit, either case; nil for any other byte. For reading `%XX`.
    public static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// One path segment: `/` is encoded too.
    public static func pathSegment(_ text: String) -> String {
        encoded(text, keeping: isUnreserved)
    }

    /// `text` with every UTF-8 byte that `keeping` refuses written as `%XX`.
    public static func encoded(_ text: String, keeping: (UInt8) -> Bool) -> String {
        var result = ""
        result.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if keeping(byte) {
                result.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                result += "%" + hex(byte >> 4) + hex(byte & 0x0F)
            }
        }
        return result
    }

    /// A path of segments (`owner/name`): each encoded, the `/` between them kept.
    public static func path(_ text: String) -> String {
        text.split(separator: "/", omittingEmptySubsequences: false).map { pathSegment(String($0)) }
            .joined(separator: "/")
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
            UInt8(ascii: "~"):
            true
        default: false
        }
    }

    static func hex(_ nibble: UInt8) -> String {
        String(nibble, radix: 16, uppercase: true)
    }
}
