import BridgeCore
import BridgeStore
import Foundation
import WebhookServer

/// The admin listener (`admin_listen`, loopback by default): `/metrics` in the Prometheus text
/// format, the status page at `/`, and the JSON API (`/api/runs`, `/api/runs/{id}`,
/// `/api/deliveries`, `/api/deliveries/{id}`). It is a separate listener so the public reverse
/// proxy never exposes it; off loopback it requires `Authorization: Bearer <admin_token>`.
public struct AdminRoutes: Sendable {
    public var status: ServiceStatus
    public var metrics: Metrics
    public var token: String?
    /// The database the page and the API read, through a read-only connection per request: a
    /// WAL reader never waits for the daemon's writer, nor makes it wait. Nil serves `/metrics` only.
    public var databasePath: String?
    /// Host names answered besides loopback literals and `localhost` (`admin_hosts`), lowercased.
    public var allowedHosts: Set<String>

    /// Sent with every answer: the page draws payload text (job, branch and workflow names anyone
    /// with a pull request chooses), so even if an escape were missed, nothing in it may run
    /// script, load anything, be framed, or leak the admin URL in a `Referer`.
    public static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; img-src data:"),
        ("X-Content-Type-Options", "nosniff"),
        ("Referrer-Policy", "no-referrer"),
        ("X-Frame-Options", "DENY"),
        // Runs, deliveries and what was sent are the organisation's: no browser or proxy keeps a copy.
        ("Cache-Control", "no-store"),
    ]

    public init(
        status: ServiceStatus, metrics: Metrics, token: String?, databasePath: String? = nil,
        allowedHosts: [String] = []
    ) {
        self.status = status
        self.metrics = metrics
        self.token = token
        self.databasePath = databasePath
        self.allowedHosts = Set(allowedHosts.map { $0.lowercased() })
    }

    public func handle(_ request: HTTPRequest) -> HTTPResponse {
        var response = route(request)
        response.headers.append(contentsOf: Self.securityHeaders)
        return response
    }

    private func route(_ request: HTTPRequest) -> HTTPResponse {
        // Before the token: DNS rebinding gets a browser to send its own Host to this port.
        if let host = request.header("host"), !isAllowed(host: host) {
            return .json(
                421,
                [
                    "error": "misdirected_request",
                    "detail": .string(
                        "this admin listener does not answer to the host \"\(WebhookIngress.loggable(host))\": "
                            + "use 127.0.0.1 or localhost, or add the name to admin_hosts"),
                ])
        }
        if let token {
            guard let given = request.header("authorization"), Self.constantTimeEqual(given, "Bearer " + token) else {
                var response = HTTPResponse.json(
                    401, ["error": "unauthorized", "detail": "send Authorization: Bearer <admin_token>"])
                response.headers.append(("WWW-Authenticate", "Bearer"))
                return response
            }
        }
        guard request.method == "GET" || request.method == "HEAD" else {
            var response = HTTPResponse.json(405, ["error": "method_not_allowed", "allow": "GET"])
            response.headers.append(("Allow", "GET"))
            return response
        }
        switch AdminRoute(path: request.path, query: request.query) {
        case .metrics:
            let gauges = status.gauges(at: Date().timeIntervalSince1970)
            return HTTPResponse(
                status: 200, headers: [("Content-Type", "text/plain; version=0.0.4; charset=utf-8")],
                body: Data(metrics.prometheusText(gauges: gauges).utf8))
        case .statusPage:
            // The budget lives in the daemon, not the store: asked for first, then the snapshot
            // is read for the period it counts.
            let standing = status.budgetStanding()
            return read { database in
                var snapshot = try StatusSnapshot.read(
                    from: database, at: Date().timeIntervalSince1970, budget: standing.budget)
                snapshot.notices = status.notices()
                var leads = true
                if let board = status.leadership {
                    leads = board.current.epoch != nil
                    snapshot.leadership = .init(leads: leads, leader: try database.leader())
                }
                // A follower's board never moves: the leader sweeps, and its page says so.
                snapshot.recovery = status.configuration.githubAPI == nil || !leads ? nil : status.recovery.current
                return HTTPResponse(
                    status: 200,
                    headers: [("Content-Type", "text/html; charset=utf-8"), ("Cache-Control", "no-store")],
                    body: Data(StatusPage.render(snapshot, standing: standing).utf8))
            }
        case .runs(let repository, let limit):
            return read { database in
                let runs = try database.listRuns(repository: repository, limit: limit)
                return .json(200, .array(runs.map(RunDocument.listing)))
            }
        case .deliveries(let limit):
            return read { database in
                let deliveries = try database.listDeliveries(limit: limit)
                return .json(200, .array(deliveries.map { DeliveryDocument.json($0, payload: false) }))
            }
        case .notARunID(let text):
            return .json(
                404,
                [
                    "error": "not_found",
                    "detail": .string("no run \(WebhookIngress.loggable(text)) (run ids are numbers)"),
                ])
        case .run(let runID):
            return read { database in
                guard let document = try RunDocument.json(database: database, runID: runID) else {
                    return .json(404, ["error": "not_found", "detail": .string("no run \(runID) recorded")])
                }
                return .json(200, document)
            }
        case .delivery(let id):
            // Ids are `[A-Za-z0-9._-]{1,64}` (`WebhookIngress.isValidDeliveryID`): anything else is
            // recorded nowhere, so it is not looked up (nor echoed whole).
            guard WebhookIngress.isValidDeliveryID(id) else {
                return .json(
                    404,
                    ["error": "not_found", "detail": .string("no delivery \(WebhookIngress.loggable(id)) recorded")])
            }
            return read { database in
                guard let delivery = try database.delivery(id: id) else {
                    return .json(404, ["error": "not_found", "detail": .string("no delivery \(id) recorded")])
                }
                return .json(200, DeliveryDocument.json(delivery, payload: true))
            }
        case .notFound:
            return .json(
                404,
                [
                    "error": "not_found",
                    "detail": "the admin listener serves /, /metrics, /api/runs[/{id}] and /api/deliveries[/{id}]",
                ])
        }
    }

    /// Whether a `Host` header names this listener as its operator reaches it: a loopback literal
    /// (`127.0.0.1`, `[::1]`), `localhost`, or a name in `admin_hosts`, each with or without a port.
    /// A request without `Host` passes: browsers always send one, so its absence is no rebinding.
    func isAllowed(host header: String) -> Bool {
        AdminRoute.isAllowed(host: header, allowedHosts: allowedHosts)
    }

    /// Runs `body` on a read-only connection of its own; a store that cannot be read is a 503,
    /// since the daemon may only be migrating or starting.
    func read(_ body: (BridgeDatabase) throws -> HTTPResponse) -> HTTPResponse {
        guard let databasePath else {
            return .json(503, ["error": "unavailable", "detail": "this admin listener has no database to read"])
        }
        do {
            // A path or a PostgreSQL URI: followers read what the leader wrote.
            let location = (try? DatabaseLocation(parsing: databasePath)) ?? .sqlite(path: databasePath)
            let database = try BridgeDatabase(location: location, readOnly: true)
            return try body(database)
        } catch {
            return .json(503, ["error": "unavailable", "detail": .string("reading the database failed: \(error)")])
        }
    }

    /// Compares without an early exit, so the time taken says nothing about the token.
    static func constantTimeEqual(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8)
        let right = Array(rhs.utf8)
        var difference = UInt8(left.count == right.count ? 0 : 1)
        for index in 0..<max(left.count, right.count) {
            difference |= (index < left.count ? left[index] : 0) ^ (index < right.count ? right[index] : 0)
        }
        return difference == 0
    }
}
