import BridgeCore
import Foundation

extension FuzzCheck {
    /// The parsers both listeners run on a request before anything is authenticated: the admin
    /// listener's route and query (`AdminRoute`, `QueryString`), its `Host` check, and the action
    /// route's token path (`ActionTokenPath`). A trap in any of them kills the daemon for whoever can
    /// make a browser send a GET, so the first property is that they return at all; then:
    /// - a listing's `limit` is within `1...AdminRoute.maximumLimit`;
    /// - a run id is a non-negative number whose digits are the path's (decoded) segment;
    /// - no query item has an empty name;
    /// - a token path's token is `ActionTokenPath.tokenLength` ASCII characters and the path is
    ///   exactly the prefix and the token;
    /// - each answer is the same when asked twice.
    ///
    /// Input: UTF-8 (invalid sequences become U+FFFD, as libmicrohttpd's bytes do in `String(cString:)`),
    /// split at the first newline into the request target (split at its first `?` into path and query,
    /// as `RequestState` does) and a `Host` header.
    public static func listenerRoutes(_ input: [UInt8]) throws(FuzzFinding) {
        let text = String(decoding: input, as: UTF8.self)
        let target: Substring
        let host: Substring
        if let newline = text.firstIndex(of: "\n") {
            target = text[..<newline]
            host = text[text.index(after: newline)...]
        } else {
            target = Substring(text)
            host = ""
        }
        var path = String(target)
        var query: String?
        if let mark = target.firstIndex(of: "?") {
            path = String(target[..<mark])
            query = String(target[target.index(after: mark)...])
        }
        // What the admin listener also serves under another path: the route must not depend on it.
        for path in [path, "/api/runs", "/api/deliveries/", "/api/runs/" + (query ?? "")] {
            let route = AdminRoute(path: path, query: query)
            try holds(route == AdminRoute(path: path, query: query), "\(path) \(query ?? "") routes two ways")
            switch route {
            case .runs(_, let limit), .deliveries(let limit):
                try holds((1...AdminRoute.maximumLimit).contains(limit), "limit \(limit) for \(query ?? "")")
            case .run(let id):
                let segment = QueryString.decodedSegment(path.dropFirst("/api/runs/".count))
                try holds(id >= 0 && Int(segment) == id, "run id \(id) from \(segment.debugDescription)")
            default:
                break
            }
        }
        let items = QueryString.items(query)
        try holds(!items.keys.contains(""), "an empty query name from \(query ?? "")")
        try holds(items == QueryString.items(query), "\(query ?? "") reads two ways")

        let allowed: Set<String> = ["bridge.internal"]
        let verdict = AdminRoute.isAllowed(host: String(host), allowedHosts: allowed)
        try holds(
            verdict == AdminRoute.isAllowed(host: String(host), allowedHosts: allowed), "\(host) judged two ways")

        for candidate in [path, ActionSettings.pathPrefix + path, ActionSettings.pathPrefix + (query ?? "")] {
            guard let token = ActionTokenPath.token(in: candidate) else { continue }
            try holds(
                token.utf8.count == ActionTokenPath.tokenLength && token.utf8.allSatisfy { $0 < 0x80 },
                "token \(token.debugDescription) from \(candidate.debugDescription)")
            try holds(
                ActionSettings.pathPrefix + token == candidate, "token \(token) is not all of \(candidate)")
        }
    }

    /// `require` of the other targets, here so that this target builds from the fuzz files alone
    /// (`Fuzz/fuzz.sh` compiles it without the rest of the test support library).
    private static func holds(_ condition: Bool, _ message: @autoclosure () -> String) throws(FuzzFinding) {
        if !condition { throw FuzzFinding(message()) }
    }
}
