import Foundation

/// What a request to the admin listener asks for, read from its path and query alone.
///
/// Kept apart from the listener (and free of I/O) so that every request line can be judged without
/// a socket or a database: the fuzz target `listener-routes` feeds it arbitrary bytes, and no
/// input may trap, since a trap here kills the daemon for anyone a browser can make send a GET.
public enum AdminRoute: Sendable, Equatable {
    case metrics
    case statusPage
    /// `/api/runs`, optionally of one repository (`repo=`), newest first.
    case runs(repository: String?, limit: Int)
    case deliveries(limit: Int)
    case run(id: Int)
    /// `/api/runs/{text}` where `text` (decoded) is not a run id.
    case notARunID(String)
    case delivery(id: String)
    case notFound

    /// The most rows one listing returns.
    public static let maximumLimit = 500
    public static let defaultRunsLimit = 20
    public static let defaultDeliveriesLimit = 50

    /// The route for `path` (still percent-encoded, without the query) and `query` (raw, after
    /// the first `?`).
    public init(path: String, query: String?) {
        switch path {
        case "/metrics":
            self = .metrics
        case "/", "/index.html":
            self = .statusPage
        case "/api/runs", "/api/runs/":
            let items = QueryString.items(query)
            self = .runs(
                repository: items["repo"],
                limit: QueryString.limit(items, default: Self.defaultRunsLimit, maximum: Self.maximumLimit))
        case "/api/deliveries", "/api/deliveries/":
            let items = QueryString.items(query)
            self = .deliveries(
                limit: QueryString.limit(items, default: Self.defaultDeliveriesLimit, maximum: Self.maximumLimit))
        case let path where path.hasPrefix("/api/runs/"):
            let text = QueryString.decodedSegment(path.dropFirst("/api/runs/".count))
            // Digits only: `Int` alone would also take `+5` and `-5`, which no run has.
            if !text.isEmpty, text.utf8.allSatisfy(Self.isDigit), let id = Int(text) {
                self = .run(id: id)
            } else {
                self = .notARunID(text)
            }
        case let path where path.hasPrefix("/api/deliveries/"):
            self = .delivery(id: QueryString.decodedSegment(path.dropFirst("/api/deliveries/".count)))
        default:
            self = .notFound
        }
    }

    /// Whether a `Host` header names the admin listener as its operator reaches it: a loopback
    /// literal (`127.0.0.1`, `[::1]`), `localhost`, or a name in `allowedHosts` (lowercased), each with
    /// or without a port. Any other text, however malformed, is simply not allowed.
    public static func isAllowed(host header: String, allowedHosts: Set<String>) -> Bool {
        var host = Substring(header.trimmingCharacters(in: .whitespaces).lowercased())
        if host.hasPrefix("[") {
            guard let close = host.firstIndex(of: "]") else { return false }
            let rest = host[host.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && rest.utf8.dropFirst().allSatisfy(isDigit)) else {
                return false
            }
            host = host[...close]
        } else if let colon = host.lastIndex(of: ":") {
            guard host[host.index(after: colon)...].utf8.allSatisfy(isDigit) else { return false }
            host = host[..<colon]
        }
        if host.hasSuffix(".") { host = host.dropLast() }
        return BridgeConfiguration.isLoopbackHost(String(host)) || allowedHosts.contains(String(host))
    }

    /// An ASCII digit: `Character.isNumber` would also take `٣` or `½`, which no port is.
    private static func isDigit(_ byte: UInt8) -> Bool { byte >= 0x30 && byte <= 0x39 }
}
