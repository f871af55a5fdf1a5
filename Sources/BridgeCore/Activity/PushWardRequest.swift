/// One request the bridge makes to PushWard, as a value: the reconciler returns these, the client
/// sends them, `render` prints them and the tests' fake server answers them.
public struct PushWardRequest: Sendable, Equatable {
    public enum Method: String, Sendable {
        /// `POST /activities`: create or refresh (upsert) an activity.
        case post = "POST"
        /// `PATCH /activities/{slug}`: an RFC 7396 merge-patch of state and content.
        case patch = "PATCH"
        /// `DELETE /activities/{slug}`: frees the account's room an ended activity still takes.
        /// No body (`body` is `null`).
        case delete = "DELETE"
    }

    /// What the request creates or patches: a Live Activity, or a home-screen widget.
    public enum Resource: String, Sendable {
        case activities
        case widgets
    }

    public var method: Method
    /// The activity (or widget) the request is about (also inside `path` or `body`).
    public var slug: String
    public var body: JSONValue
    public var resource: Resource

    public init(method: Method, slug: String, body: JSONValue, resource: Resource = .activities) {
        self.method = method
        self.slug = slug
        self.body = body
        self.resource = resource
    }

    /// `/activities` or `/activities/{slug}` (`/widgets…` for a widget) with the slug
    /// percent-escaped as a path segment.
    public var path: String {
        switch method {
        case .post: "/" + resource.rawValue
        case .patch, .delete: "/" + resource.rawValue + "/" + Self.escapePathSegment(slug)
        }
    }

    /// Escapes everything but RFC 3986 unreserved characters, so no slug can leave its path segment.
    public static func escapePathSegment(_ segment: String) -> String {
        var escaped = ""
        for byte in segment.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                UInt8(ascii: "~"):
                escaped.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                escaped += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return escaped
    }
}
