import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import Testing

#if canImport(Glibc)
    import Glibc
#endif

/// The admin listener against the attacks of a web page the operator visits (DNS rebinding) and of
/// payload text that slipped an escape: the `Host` check, the security headers on every answer, and
/// the Unix socket that no browser can reach.
@Suite("admin listener hardening", .serialized, .timeLimit(.minutes(1)))
struct AdminHardeningTests {
    /// A daemon with these extra top-level settings; the admin listener on loopback unless given.
    static func start(_ extra: [String: JSONValue] = [:], in directory: ScratchDirectory) async throws -> Daemon {
        var root: [String: JSONValue] = [
            "listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0",
            "database": .string(directory.path("bridge.sqlite")),
            "github": ["webhook_secrets": ["admin-hardening-secret-0123"]],
        ]
        root.merge(extra) { $1 }
        let configuration = try BridgeConfiguration(json: JSONValue.object(root).canonicalData)
        let logger = Logger(label: "test", minimumLevel: .error, sink: { _ in })
        return try await offPool { try Daemon.start(configuration: configuration, logger: logger) }
    }

    static func stop(_ daemon: Daemon) async throws {
        try await offPool { daemon.stop(deadline: 5) }
    }

    static func get(_ daemon: Daemon, _ target: String, host: String?, token: String? = nil) async throws
        -> HTTPTestClient.Response
    {
        let port = daemon.adminPort
        let headers = token.map { [("Authorization", "Bearer \($0)")] } ?? []
        return try await offPool {
            try HTTPTestClient.request(
                port: port, method: "GET", target: target, headers: headers, host: host, timeout: 60)
        }
    }

    static func expectSecurityHeaders(
        _ response: HTTPTestClient.Response, sourceLocation: SourceLocation = #_sourceLocation
    ) {
        #expect(
            response.headers["content-security-policy"]
                == "default-src 'none'; style-src 'unsafe-inline'; img-src data:", sourceLocation: sourceLocation)
        #expect(response.headers["x-content-type-options"] == "nosniff", sourceLocation: sourceLocation)
        #expect(response.headers["referrer-policy"] == "no-referrer", sourceLocation: sourceLocation)
        #expect(response.headers["x-frame-options"] == "DENY", sourceLocation: sourceLocation)
        // Runs and what was sent: no browser or proxy keeps a copy of any admin answer.
        #expect(response.headers["cache-control"] == "no-store", sourceLocation: sourceLocation)
    }

    @Test("a Host that is not loopback, localhost or in admin_hosts is 421 on every path; listed names pass")
    func hostCheck() async throws {
        let directory = try ScratchDirectory()
        let daemon = try await Self.start(["admin_hosts": ["Bridge.Internal"]], in: directory)
        let port = daemon.adminPort
        let allowed = [
            "127.0.0.1:\(port)", "127.0.0.1", "127.5.6.7:\(port)", "localhost", "LOCALHOST:\(port)", "localhost.",
            "[::1]:\(port)", "[::1]", "bridge.internal", "bridge.internal:\(port)",
        ]
        for host in allowed {
            let response = try await Self.get(daemon, "/metrics", host: host)
            #expect(response.status == 200, "Host: \(host)")
            Self.expectSecurityHeaders(response)
        }
        // No Host at all is no rebinding: browsers always send one.
        #expect(try await Self.get(daemon, "/metrics", host: nil).status == 200)
        let refused = [
            "attacker.example", "attacker.example:\(port)", "localhost.attacker.example", "127.0.0.1.nip.io",
            "bridge.internal.attacker.example", "[::1].attacker.example", "[::2]:\(port)", "10.0.0.5:\(port)",
            "localhost:80x", "\u{202E}localhost",
        ]
        for host in refused {
            for path in ["/", "/metrics", "/api/deliveries", "/api/deliveries/x"] {
                let response = try await Self.get(daemon, path, host: host)
                #expect(response.status == 421, "Host: \(host) \(path)")
                #expect(response.json?["error"] == "misdirected_request")
                Self.expectSecurityHeaders(response)
            }
        }
        try await Self.stop(daemon)
    }

    @Test("off loopback the token is still required after the Host check; every answer has the security headers")
    func tokenAndHeaders() async throws {
        let directory = try ScratchDirectory()
        let daemon = try await Self.start(["admin_token": "admin-token-0123456789"], in: directory)
        let unauthorized = try await Self.get(daemon, "/api/runs", host: "localhost")
        #expect(unauthorized.status == 401)
        Self.expectSecurityHeaders(unauthorized)
        // A rebinding page never gets as far as guessing the token.
        let misdirected = try await Self.get(daemon, "/api/runs", host: "attacker.example")
        #expect(misdirected.status == 421)
        for path in ["/", "/api/runs", "/api/deliveries", "/metrics", "/nowhere"] {
            let response = try await Self.get(daemon, path, host: "localhost", token: "admin-token-0123456789")
            #expect([200, 404].contains(response.status), "\(path): \(response.status)")
            Self.expectSecurityHeaders(response)
        }
        try await Self.stop(daemon)
    }

    @Test(
        "no query, path or Host a web page can send kills the admin listener: each is answered, and both listeners stay up"
    )
    func malformedRequestsAreAnswered() async throws {
        let directory = try ScratchDirectory()
        let daemon = try await Self.start(in: directory)
        let long = (0..<1_000).map { "k\($0)=%zz" }.joined(separator: "&")
        let listings = [
            "/api/runs?=", "/api/runs?&", "/api/runs?==", "/api/runs?%", "/api/runs?a=%zz",
            "/api/runs?limit=99999999999999999999", "/api/runs?limit=-5", "/api/runs?limit=-99999999999999999999",
            "/api/runs?repo=%00%E2%80%AE%F0%9F%98%80", "/api/runs?repo=\u{202E}evil", "/api/runs?" + long,
            "/api/deliveries?=", "/api/deliveries?%&=&==", "/api/deliveries?limit=99999999999999999999",
        ]
        let refused = [
            "/api/runs/-5", "/api/runs/99999999999999999999", "/api/runs/%", "/api/runs/%00", "/api/runs/\u{202E}1",
            "/api/deliveries/%zz", "/api/deliveries/%00", "/api/deliveries/" + String(repeating: "%", count: 10_000),
            "/%", "/nope?=",
        ]
        for target in listings {
            let response = try await Self.get(daemon, target, host: "127.0.0.1")
            #expect(response.status == 200, "\(target.prefix(60))")
            #expect((try? JSONValue(parsing: response.body))?.arrayValue != nil, "\(target.prefix(60))")
        }
        for target in refused {
            let response = try await Self.get(daemon, target, host: "127.0.0.1")
            #expect((400..<500).contains(response.status), "\(target.prefix(60)): \(response.status)")
            #expect(response.text.utf8.count < 1_000, "\(target.prefix(60)) echoed whole")
        }
        for host in [
            "[", "]:", "[::1", ":", "\u{202E}localhost", "localhost:\u{0663}", String(repeating: "[", count: 10_000),
        ] {
            let response = try await Self.get(daemon, "/api/runs?=", host: host)
            #expect(
                (400..<500).contains(response.status), "Host \(host.prefix(20).debugDescription): \(response.status)")
        }
        // The page and the metrics ignore their query, whatever it is.
        for target in ["/?", "/?=&%", "/metrics?=", "/metrics?%zz&==&" + long] {
            #expect(try await Self.get(daemon, target, host: "localhost").status == 200, "\(target.prefix(40))")
        }
        let port = daemon.port
        let health = try await offPool {
            try HTTPTestClient.request(port: port, method: "GET", target: "/healthz?=&%", timeout: 60)
        }
        #expect(health.status == 200)
        try await Self.stop(daemon)
    }

    @Test("admin_listen unix:PATH serves the admin routes on a 0600 socket, removed when the daemon stops")
    func unixSocket() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("admin.sock")
        let daemon = try await Self.start(["admin_listen": .string("unix:" + path)], in: directory)
        var status = stat()
        #expect(lstat(path, &status) == 0)
        #expect(status.st_mode & S_IFMT == S_IFSOCK)
        #expect(status.st_mode & 0o777 == 0o600)
        let metrics = try await offPool {
            let client = try HTTPTestClient(unixSocket: path)
            try client.send(HTTPTestClient.head(method: "GET", target: "/metrics", headers: [], contentLength: 0))
            return try client.readResponse()
        }
        #expect(metrics.status == 200)
        #expect(metrics.text.contains("# HELP pushward_bridge_"))
        Self.expectSecurityHeaders(metrics)
        try await Self.stop(daemon)
        #expect(lstat(path, &status) != 0, "the socket file outlived the daemon")
    }

    @Test("a stale socket file is replaced; any other file in the way stops the start")
    func socketPathInTheWay() async throws {
        let directory = try ScratchDirectory()
        let path = directory.path("admin.sock")
        // A socket left by a killed daemon: bound, never unlinked.
        let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        close(stale)
        #expect(bound == 0)
        let daemon = try await Self.start(["admin_listen": .string("unix:" + path)], in: directory)
        try await Self.stop(daemon)

        let regular = try directory.write("not-a-socket", "keep me")
        await #expect(throws: (any Error).self) {
            _ = try await Self.start(["admin_listen": .string("unix:" + regular)], in: directory)
        }
        #expect(FileManager.default.contents(atPath: regular) == Data("keep me".utf8))
    }
}
