/// The token in a button's request path, `/actions/{token}` on the webhook listener, read without
/// trusting anything about the path: the route is unsigned and open to anyone who can reach the
/// listener, so any bytes at all must get an answer rather than a trap.
public enum ActionTokenPath {
    /// Characters in a token: 33 random bytes as base64url, without padding.
    public static let tokenLength = 44

    /// The token segment of `path`, or nil when the path is not `/actions/` followed by exactly
    /// `tokenLength` base64url characters (such a request is a 404 without a lookup).
    public static func token(in path: String) -> Substring? {
        guard path.hasPrefix(ActionSettings.pathPrefix) else { return nil }
        let segment = path.dropFirst(ActionSettings.pathPrefix.count)
        guard segment.utf8.count == tokenLength, segment.utf8.allSatisfy(isBase64URL) else { return nil }
        return segment
    }

    private static func isBase64URL(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "_"):
            true
        default: false
        }
    }
}
