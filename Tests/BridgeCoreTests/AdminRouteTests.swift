import BridgeCore
import Foundation
import Testing

/// The admin listener's request parsing and the action route's token path, on the inputs that used
/// to kill the daemon (`?=`) and on what a hostile web page can put in a URL.
@Suite("admin route and query parsing")
struct AdminRouteTests {
    @Test(
        "empty names, lone separators and broken escapes never trap; names without text are skipped",
        arguments: [
            ("=", [String: String]()), ("&", [:]), ("==", [:]), ("&&=&", [:]), ("=x", [:]),
            ("%", ["%": ""]), ("a=%zz", ["a": "%zz"]), ("a=%", ["a": "%"]), ("a==b", ["a": "=b"]),
            ("a", ["a": ""]), ("a=1&a=2", ["a": "2"]), ("a+b=c+d", ["a b": "c d"]), ("%61=%62", ["a": "b"]),
            ("a=%C3", ["a": "%C3"]), ("repo=%00", ["repo": "\u{0}"]), ("%00=x", ["\u{0}": "x"]),
            ("repo=%E2%80%AEevil", ["repo": "\u{202E}evil"]), ("e=%F0%9F%98%80", ["e": "\u{1F600}"]),
        ])
    func queryItems(query: String, expected: [String: String]) {
        #expect(QueryString.items(query) == expected, "\(query.debugDescription)")
    }

    @Test("no query and an empty one have no items")
    func noQuery() {
        #expect(QueryString.items(nil).isEmpty)
        #expect(QueryString.items("").isEmpty)
    }

    @Test("a 10 KB query of many pairs, and one 10 KB name, read in full")
    func longQueries() {
        let pairs = (0..<1_000).map { "key\($0)=v%zz" }.joined(separator: "&")
        #expect(pairs.utf8.count > 10_000)
        let items = QueryString.items(pairs)
        #expect(items.count == 1_000)
        #expect(items["key999"] == "v%zz")
        let name = String(repeating: "%", count: 10_240)
        #expect(QueryString.items(name + "=1") == [name: "1"])
    }

    @Test(
        "limit: a positive number up to 500; too large is 500; anything else is the default",
        arguments: [
            ("limit=7", 7), ("limit=500", 500), ("limit=501", 500), ("limit=99999999999999999999", 500),
            ("limit=0", 20), ("limit=-5", 20), ("limit=-99999999999999999999", 20), ("limit=", 20),
            ("limit", 20), ("limit=+5", 20), ("limit=5x", 20), ("limit=%35", 5), ("limit=%00", 20),
            ("limit=\u{0663}", 20), ("limit=%zz", 20), ("=", 20),
        ])
    func limit(query: String, expected: Int) {
        #expect(AdminRoute(path: "/api/runs", query: query) == .runs(repository: nil, limit: expected), "\(query)")
    }

    @Test("/api/deliveries has its own default")
    func deliveriesLimit() {
        #expect(AdminRoute(path: "/api/deliveries", query: "=") == .deliveries(limit: 50))
        #expect(AdminRoute(path: "/api/deliveries/", query: "limit=99999999999999999999") == .deliveries(limit: 500))
    }

    @Test("the repository filter is read decoded, NUL and bidi controls included")
    func repository() {
        #expect(
            AdminRoute(path: "/api/runs", query: "repo=acme%2Frocket&limit=3")
                == .runs(repository: "acme/rocket", limit: 3))
        #expect(
            AdminRoute(path: "/api/runs", query: "repo=%E2%80%AE%00") == .runs(repository: "\u{202E}\u{0}", limit: 20))
    }

    @Test(
        "a run id is decimal digits that fit an Int; anything else is not a run id",
        arguments: [
            ("/api/runs/42", AdminRoute.run(id: 42)), ("/api/runs/%34%32", .run(id: 42)),
            ("/api/runs/-5", .notARunID("-5")), ("/api/runs/+5", .notARunID("+5")),
            ("/api/runs/99999999999999999999", .notARunID("99999999999999999999")),
            ("/api/runs/%", .notARunID("%")), ("/api/runs/%00", .notARunID("\u{0}")),
            ("/api/runs/%E2%80%AE1", .notARunID("\u{202E}1")), ("/api/runs/\u{0663}", .notARunID("\u{0663}")),
        ])
    func runID(path: String, expected: AdminRoute) {
        #expect(AdminRoute(path: path, query: nil) == expected)
    }

    @Test("other paths: the page, metrics, deliveries by id, and 404 for the rest")
    func otherPaths() {
        #expect(AdminRoute(path: "/", query: "=") == .statusPage)
        #expect(AdminRoute(path: "/metrics", query: "%") == .metrics)
        #expect(AdminRoute(path: "/api/deliveries/%zz", query: nil) == .delivery(id: "%zz"))
        #expect(AdminRoute(path: "/api/deliveries/a%00b", query: nil) == .delivery(id: "a\u{0}b"))
        for path in [
            "", "?", "/api", "/metrics/", "//api/runs", "/API/RUNS", "/\u{202E}", String(repeating: "/", count: 10_000),
        ] {
            #expect(AdminRoute(path: path, query: nil) == .notFound, "\(path.prefix(20).debugDescription)")
        }
    }

    @Test(
        "a Host header of any shape is judged, never trapped on",
        arguments: [
            ("127.0.0.1", true), ("localhost:8080", true), ("[::1]:9", true), ("LOCALHOST.", true),
            ("bridge.internal", true), ("", false), ("[", false), ("]", false), ("[::1", false), ("[::1]x", false),
            (":", false), ("127.0.0.1:", true), ("127.0.0.1:99999999999999999999", true), ("evil.example", false),
            ("localhost\u{0}", false), ("\u{202E}localhost", false), ("localhost:\u{0663}", false),
        ])
    func host(header: String, allowed: Bool) {
        #expect(
            AdminRoute.isAllowed(host: header, allowedHosts: ["bridge.internal"]) == allowed,
            "\(header.debugDescription)")
    }

    @Test("the action route's token: exactly 44 base64url characters after /actions/, nothing else")
    func actionTokenPath() {
        let token = String(String(repeating: "aZ0-_", count: 9).prefix(44))
        let shorter = String(token.dropLast())
        #expect(ActionTokenPath.token(in: "/actions/" + token).map(String.init) == token)
        let refused: [String] = [
            "/actions/", "/actions", "/actions/" + token + "/", "/actions/" + shorter + "=",
            "/actions/" + shorter + "\u{0}", "/actions/" + shorter + "\u{E9}",
            "/actions/" + String(token.dropLast(2)) + "\u{E9}", "/actions/%41" + String(token.dropFirst(3)),
            "/x/" + token, "/actions/" + String(repeating: "A", count: 10_000),
        ]
        for path in refused {
            #expect(ActionTokenPath.token(in: path) == nil, "\(path.prefix(60).debugDescription)")
        }
    }
}
