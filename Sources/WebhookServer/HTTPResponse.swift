import BridgeCore
import Foundation

/// What a handler answers. The server adds `Content-Length`, `Date` and `Connection` itself.
public struct HTTPResponse: Sendable {
    /// The status code (`200`, `202`, `413`, ...).
    public var status: Int
    /// Response headers in the order they are sent. A list, not a dictionary, so a header may
    /// repeat and the order is stable. `Content-Length` and `Transfer-Encoding` are the server's
    /// to set and are dropped, as is any header libmicrohttpd refuses (a name or value containing
    /// CR, LF, or a colon in the name).
    public var headers: [(String, String)]
    /// The body; empty for none.
    public var body: Data

    public init(status: Int, headers: [(String, String)] = [], body: Data = Data()) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response: `Content-Type: application/json` and the value's canonical (sorted-keys,
    /// compact) form followed by a newline, so `curl` output ends cleanly and tests can compare
    /// bytes.
    public static func json(_ status: Int, _ value: JSONValue) -> HTTPResponse {
        var body = value.canonicalData
        body.append(0x0A)
        return HTTPResponse(status: status, headers: [("Content-Type", "application/json")], body: body)
    }

    /// The value of the first header called `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        let wanted = name.lowercased()
        return headers.first { $0.0.lowercased() == wanted }?.1
    }
}
