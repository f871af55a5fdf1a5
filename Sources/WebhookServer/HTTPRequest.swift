import Foundation

/// One HTTP request as the server hands it to its handler: fully read, body included.
///
/// A value, not a view into libmicrohttpd's buffers, so a handler may keep it (or send it to
/// another thread) after the connection that carried it is gone.
public struct HTTPRequest: Sendable {
    /// The method exactly as sent (`POST`, `GET`, ...); HTTP methods are case-sensitive.
    public var method: String
    /// The path of the request target, without the query and still percent-encoded, as it was on
    /// the request line (`/webhook`, `/a%20b`). Routing on the raw text means `/web%68ook` is not
    /// `/webhook`, which is the safe reading for a webhook endpoint.
    public var path: String
    /// The raw text after the first `?` (not decoded); nil when the target has no `?`, empty for a
    /// trailing `?`.
    public var query: String?
    /// Request headers by lowercased name. A header sent more than once is joined with `", "`, in
    /// the order received (RFC 9110 §5.3).
    public var headers: [String: String]
    /// The raw body bytes, exactly as received: a webhook signature covers these bytes.
    public var body: Data
    /// The peer's IP address (`127.0.0.1`, `::1`), or nil when libmicrohttpd could not say. Behind a
    /// reverse proxy this is the proxy.
    public var remoteAddress: String?

    /// Header names in `headers` are lowercased here; names that then collide have their values
    /// joined with `", "`.
    public init(
        method: String,
        path: String,
        query: String? = nil,
        headers: [String: String] = [:],
        body: Data = Data(),
        remoteAddress: String? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { $0 + ", " + $1 })
        self.body = body
        self.remoteAddress = remoteAddress
    }

    /// The value of header `name`, compared case-insensitively; nil when absent.
    public func header(_ name: String) -> String? {
        headers[name.lowercased()]
    }
}
