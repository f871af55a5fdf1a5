import BridgeCore
import Foundation
import WebhookServer

/// A PushWard server on loopback for end-to-end tests: a real HTTP server that stores activities,
/// applies merge-patches exactly as the contract says (through `InMemoryPushWard`), answers 422
/// to whatever the real server rejects, counts Live Activity updates against a quota (`GET
/// /auth/me` reports it; `429 quota.exceeded` once it is spent), records every request, and
/// injects faults on demand.
///
/// It holds the bridge to PushWard's documented limits (`FakeLimits`, on for every test): five
/// ongoing activities per person with eviction to `preempted`, fifty activities and fifty widgets
/// per account, auto-deletion `ended_ttl` after the end, and 200 requests a minute per client
/// address (`429 rate_limit.exceeded`, `Retry-After: 60`). It answers `DELETE /activities/{slug}`,
/// `GET /activities[?state=]` and `GET /activities/{slug}` with the documented shapes.
public final class FakePushWardServer: @unchecked Sendable {
    /// One request as it arrived.
    public struct Received: Sendable {
        public var method: String
        public var path: String
        public var headers: [String: String]
        public var body: JSONValue?
        public var at: UnixTime
        /// The status the fake answered.
        public var status: Int
        /// The query string (`upsert=true`, `state=preempted`), nil when there was none.
        public var query: String?
    }

    /// A fault answers a request instead of the normal behaviour (nil: behave normally).
    public typealias FaultRule = @Sendable (_ method: String, _ path: String, _ index: Int) -> Fault?

    public enum Fault: Sendable {
        /// Answer with this status and problem body (and `Retry-After` when given; `resetAt` as an
        /// RFC 3339 `reset_at`). For a `quota.exceeded` that follows from what was sent, set a limit
        /// with `setQuota` instead: the fake then counts and refuses as PushWard does.
        case status(Int, code: String, detail: String = "injected", retryAfter: Double? = nil, resetAt: UnixTime? = nil)
        /// Wait this long, then behave normally.
        case delay(Double)
    }

    /// One notification the fake accepted.
    public struct Notification: Sendable {
        public var id: Int64
        public var body: JSONValue
        public var at: UnixTime
    }

    /// Whose key the fake was given (`FakeKeyKind`).
    public typealias KeyKind = FakeKeyKind

    public let apiKey: String
    private let lock = NSLock()
    private var keyKind = KeyKind.personal
    private var notifications: [Notification] = []
    /// Notifications allowed this period (nil: unlimited) and used so far.
    private var notificationLimit: Int?
    private var notificationsUsed = 0
    private var notificationViolations: [ContractViolation] = []
    private var widgetStore: [String: StoredWidget] = [:]
    private var widgetViolations: [ContractViolation] = []
    private var widgetLimit: Int?
    private var widgetsUsed = 0
    private var state = InMemoryPushWard()
    private var rateLimiter = FakeRateLimiter(
        limit: FakeLimits.documented.requestsPerWindow, window: FakeLimits.documented.rateWindow)
    private var received: [Received] = []
    private var faultRule: FaultRule?
    private let requestLog: FakeRequestLog?
    private var unchecked: String?
    private var server: HTTPServer?
    public private(set) var port: Int = 0
    /// Signalled after each request is recorded (`until`).
    private let changes = ChangeSignal()

    /// Starts listening on `127.0.0.1:port` (0: any free port), with an unlimited quota and the
    /// documented limits. Every request it receives goes as a JSON line to a file under
    /// `requestLog` (by default the directory `PUSHWARD_FAKE_REQUEST_LOG` names, which `make test`
    /// sets; nil: none), where `file` and `line` name the test that made it. `clock` is the time
    /// every request is judged at (the minute's window, TTLs, ended_at): a test of one limit can
    /// hold it, so a loaded machine cannot slide the window under it.
    public init(
        apiKey: String = "hlk_test", port: Int = 0,
        requestLog: String? = ProcessInfo.processInfo.environment[FakeRequestLog.variable],
        clock: @escaping @Sendable () -> UnixTime = { Date().timeIntervalSince1970 },
        file: String = #fileID, line: Int = #line
    ) throws {
        self.apiKey = apiKey
        self.clock = clock
        self.requestLog = requestLog.flatMap { FakeRequestLog(directory: $0, origin: "\(file):\(line)") }
        try start(port: port)
    }

    /// Marks the requests from now on as sent invalid on purpose (a test of the fake's refusals),
    /// with the reason: the schema check after the suite counts them and skips them. Requests the
    /// bridge sends are never marked.
    public func sendsInvalidRequestsOnPurpose(_ reason: String) {
        lock.lock()
        unchecked = reason
        lock.unlock()
    }

    public var baseURL: String { "http://127.0.0.1:\(port)" }

    /// The time requests are judged at (see `init`).
    private let clock: @Sendable () -> UnixTime

    /// Starts (again) on the same port after `stop()`: PushWard "comes back".
    public func start(port requested: Int? = nil) throws {
        let configuration = HTTPServer.Configuration(listen: "127.0.0.1:\(requested ?? port)")
        // Weak: a request racing the fake's release (its deinit stops the server, on another thread
        // when a handler held the last reference) is told 503 instead of reaching a freed fake.
        let server = try HTTPServer(configuration: configuration) { [weak self] request in
            self?.handle(request) ?? .json(503, ["error": "stopping"])
        }
        lock.lock()
        self.server = server
        self.port = server.port
        lock.unlock()
    }

    /// Stops listening: connections are refused until `start()`.
    public func stop() {
        lock.lock()
        let server = self.server
        self.server = nil
        lock.unlock()
        server?.stop()
    }

    deinit { server?.stop() }

    public func setFault(_ rule: FaultRule?) {
        lock.lock()
        faultRule = rule
        lock.unlock()
    }

    /// Sets the Live Activity update quota: `limit` nil is unlimited (a paid account; `/auth/me`
    /// omits the limit), `used` nil keeps the count so far, `resetsAt` nil is the first of the next
    /// UTC month. Lifting the limit clears a spent quota at once, as upgrading does on PushWard.
    public func setQuota(
        limit: Int?, used: Int? = nil, resetsAt: UnixTime? = nil, resetsAfterRefusal: Double? = nil
    ) {
        lock.lock()
        state.quota.limit = limit
        if let used { state.quota.used = used }
        state.quota.resetsAt = resetsAt
        state.quota.resetsAfterRefusal = resetsAfterRefusal
        lock.unlock()
    }

    public func setKeyKind(_ kind: KeyKind) {
        lock.lock()
        keyKind = kind
        state.keyKind = kind
        lock.unlock()
    }

    /// Refuses the next PATCH that sets `field` in its content, once (`InMemoryPushWard.refuseOnce`).
    public func refuseOnce(field: String) {
        lock.lock()
        state.refuseOnce(field: field)
        lock.unlock()
    }

    /// Sets the limits the fake enforces (the documented ones until then). The rate limit's count
    /// starts again.
    public func setLimits(_ limits: FakeLimits) {
        lock.lock()
        defer { lock.unlock() }
        state.limits = limits
        rateLimiter = FakeRateLimiter(limit: limits.requestsPerWindow, window: limits.rateWindow)
    }

    /// The limits in force.
    public var limits: FakeLimits {
        lock.lock()
        defer { lock.unlock() }
        return state.limits
    }

    /// Every eviction to `preempted` so far (slug, when, by which activity, on whose cap).
    public var evictions: [FakeEviction] {
        lock.lock()
        defer { lock.unlock() }
        return state.evictions
    }

    /// The most activities each person held ongoing at once, by person (`InMemoryPushWard.persons`).
    public var peakOngoing: [String: Int] {
        lock.lock()
        defer { lock.unlock() }
        return state.peakOngoing
    }

    /// The most activities the account held at once.
    public var peakActivities: Int {
        lock.lock()
        defer { lock.unlock() }
        return state.peakActivities
    }

    /// Every deletion so far, by `DELETE` or auto-deletion (`automatic`), oldest first.
    public var deletions: [(slug: String, at: UnixTime, automatic: Bool)] {
        lock.lock()
        defer { lock.unlock() }
        return state.deletions
    }

    /// The server-side part of each activity (times, target, scheduled deletion), by slug.
    public var activityRecords: [String: FakeActivityRecord] {
        lock.lock()
        defer { lock.unlock() }
        return state.records
    }

    /// The most requests one client address made inside one rate window, and how many the rate
    /// limit refused.
    public var rateLimitCounts: (peak: Int, refused: Int) {
        lock.lock()
        defer { lock.unlock() }
        return (rateLimiter.peak, rateLimiter.refused)
    }

    /// Sets the notification quota (nil: unlimited); `used` nil keeps the count so far.
    /// A widget as the fake holds it (`POST /widgets`, then merge patches).
    public struct StoredWidget: Sendable, Equatable {
        public var name: String
        public var content: [String: JSONValue]
        public var staleAfter: Int?
        public var updatedAt: UnixTime
        /// Requests that changed it (the POST and each PATCH), each one of the month's widget updates.
        public var updates: Int
    }

    /// The widgets stored, by slug.
    public var widgets: [String: StoredWidget] {
        lock.lock()
        defer { lock.unlock() }
        return widgetStore
    }

    /// The month's widget updates: `limit` nil is unlimited (`/auth/me` omits the limit); once
    /// `used` reaches it every widget request is `429 quota.exceeded` of kind `widget_updates`.
    public func setWidgetQuota(limit: Int?, used: Int? = nil) {
        lock.lock()
        defer { lock.unlock() }
        widgetLimit = limit
        if let used { widgetsUsed = used }
    }

    public func setNotificationQuota(limit: Int?, used: Int? = nil) {
        lock.lock()
        notificationLimit = limit
        if let used { notificationsUsed = used }
        lock.unlock()
    }

    /// The notifications accepted so far, oldest first.
    public var acceptedNotifications: [Notification] {
        lock.lock()
        defer { lock.unlock() }
        return notifications
    }

    /// The quota as counted so far.
    public var quota: FakeQuota {
        lock.lock()
        defer { lock.unlock() }
        return state.quota
    }

    public var requests: [Received] {
        lock.lock()
        defer { lock.unlock() }
        return received
    }

    public var activities: [String: StoredActivity] {
        lock.lock()
        defer { lock.unlock() }
        return state.activities
    }

    /// Every contract violation any request caused (each also answered 422).
    public var violations: [ContractViolation] {
        lock.lock()
        defer { lock.unlock() }
        return state.violations + notificationViolations + widgetViolations
    }

    private func handle(_ request: HTTPRequest) -> HTTPResponse {
        let now = clock()
        lock.lock()
        let index = received.count
        let rule = faultRule
        lock.unlock()
        let body = try? JSONValue(parsing: request.body)
        var response = answer(request, body: body, fault: rule?(request.method, request.path, index), at: now)
        response.headers.append(("X-Fake-PushWard", "1"))
        lock.lock()
        received.append(
            Received(
                method: request.method, path: request.path, headers: request.headers, body: body, at: now,
                status: response.status, query: request.query))
        requestLog?.append(
            method: request.method, path: request.path, query: request.query,
            contentType: request.header("content-type"), body: request.body, status: response.status,
            unchecked: unchecked)
        lock.unlock()
        changes.changed()
        return response
    }

    /// Whether `condition` (of what the fake holds) has come true, checked after each request
    /// the fake records: a wait on the requests, not a polling window. False only when the test's
    /// time limit cancelled the wait.
    public func until(_ condition: () -> Bool) async -> Bool {
        await changes.wait(until: condition)
    }

    private func answer(_ request: HTTPRequest, body: JSONValue?, fault: Fault?, at now: UnixTime) -> HTTPResponse {
        switch fault {
        case .status(let status, let code, let detail, let retryAfter, let resetAt)?:
            var problem: [String: JSONValue] = [
                "code": .string(code), "detail": .string(detail), "status": .number(Double(status)),
            ]
            if let retryAfter { problem["retry_after_ms"] = .number(retryAfter * 1000) }
            // RFC 3339, as PushWard writes it (§7), the same as a counted quota's refusal.
            if let resetAt { problem["reset_at"] = .string(FakeQuota.rfc3339(resetAt)) }
            return Self.problem(status, body: .object(problem), retryAfter: retryAfter.map { Int($0.rounded(.up)) })
        case .delay(let seconds)?:
            Thread.sleep(forTimeInterval: seconds)
        case nil:
            break
        }
        // Both framings at once is how requests are smuggled past a proxy (RFC 9112 §6.1): the
        // proxies in front of an API answer 400, so the fake does too.
        if request.header("content-length") != nil, request.header("transfer-encoding") != nil {
            return Self.problem(400, "request.malformed", "Content-Length and Transfer-Encoding together")
        }
        lock.lock()
        let admitted = rateLimiter.admit(request.remoteAddress ?? "127.0.0.1", at: now)
        lock.unlock()
        guard admitted else {
            // The documented answer: 60 s whatever the window, and its millisecond mirror.
            return Self.problem(
                429,
                body: [
                    "type": "https://pushward.app/errors/too-many-requests", "title": "Too Many Requests",
                    "status": 429, "code": "rate_limit.exceeded", "detail": "rate limit exceeded",
                    "retry_after_ms": 60_000,
                ], retryAfter: 60)
        }
        guard request.header("authorization") == "Bearer " + apiKey else {
            return Self.problem(401, "token.invalid", "missing or unknown integration key")
        }
        if request.method == "GET" && request.path == "/auth/me" {
            lock.lock()
            var user = state.usageDocument(at: now).objectValue ?? [:]
            user["notifications_used"] = .number(Double(notificationsUsed))
            if let notificationLimit { user["notifications_limit"] = .number(Double(notificationLimit)) }
            user["widget_updates_used"] = .number(Double(widgetsUsed))
            // The tier's limit unless a test set its own.
            if let widgetLimit { user["widget_updates_limit"] = .number(Double(widgetLimit)) }
            lock.unlock()
            return HTTPResponse.json(200, .object(user))
        }
        let contentType = request.header("content-type")?.split(separator: ";").first.map(String.init) ?? ""
        if request.method == "POST" && request.path == "/notifications" {
            guard contentType == "application/json" else {
                return Self.problem(415, "request.unsupported_media_type", "POST takes application/json")
            }
            return notify(body, at: now)
        }
        if request.path == "/widgets" || request.path.hasPrefix("/widgets/") {
            return widget(request, body: body, contentType: contentType, at: now)
        }
        if request.path == "/activities" || request.path.hasPrefix("/activities/") {
            return activity(request, body: body, contentType: contentType, at: now)
        }
        return Self.problem(404, "route.not_found", "\(request.method) \(request.path)")
    }

    /// `/activities` and `/activities/{slug}`: POST, PATCH (`?upsert=true` too), DELETE and the
    /// two GETs, applied through `InMemoryPushWard`; a 2xx POST or PATCH answers the `Activity`.
    private func activity(_ request: HTTPRequest, body: JSONValue?, contentType: String, at now: UnixTime)
        -> HTTPResponse
    {
        let slug =
            request.path == "/activities"
            ? nil : String(request.path.dropFirst("/activities/".count)).removingPercentEncoding ?? ""
        let query = Self.queryItems(request.query)
        let method: PushWardRequest.Method
        switch (request.method, slug) {
        case ("GET", nil):
            return list(query, at: now)
        case ("GET", let slug?):
            lock.lock()
            _ = state.list(state: nil, at: now)
            let document = state.document(slug)
            lock.unlock()
            guard let document else { return Self.problem(404, "activity.not_found", "activity not found") }
            return HTTPResponse.json(200, document)
        case ("DELETE", let slug?):
            lock.lock()
            let status = state.delete(slug, at: now)
            lock.unlock()
            guard status == 204 else { return Self.problem(404, "activity.not_found", "activity not found") }
            return HTTPResponse(status: 204, headers: [], body: Data())
        case ("POST", nil):
            guard contentType == "application/json" else {
                return Self.problem(415, "request.unsupported_media_type", "POST takes application/json")
            }
            method = .post
        case ("PATCH", _?):
            // The OpenAPI document names only this type (some prose says plain JSON is taken too).
            guard contentType == "application/merge-patch+json" else {
                return Self.problem(415, "request.unsupported_media_type", "PATCH takes application/merge-patch+json")
            }
            method = .patch
        default:
            return Self.problem(404, "route.not_found", "\(request.method) \(request.path)")
        }
        guard let body else {
            return Self.problem(400, "request.body_invalid", "invalid JSON: the body is not JSON")
        }
        // A POST without a slug is a schema error (422), which the validator reports.
        let target = slug ?? body["slug"]?.stringValue ?? ""
        lock.lock()
        let personal = keyKind == .personal
        lock.unlock()
        if body["target"] != nil, personal {
            // PushWard's code for this is not documented; the status is (§3).
            return Self.problem(422, "request.validation_failed", "target: only organisation keys may set a target")
        }
        lock.lock()
        let upsert = method == .patch && query["upsert"]?.lowercased() == "true"
        let status = state.handle(PushWardRequest(method: method, slug: target, body: body), at: now, upsert: upsert)
        let entry = state.log.last
        let refusal = status == 429 ? state.quota.exceededProblem(at: now) : nil
        let document = state.document(target)
        let retryAfter = state.secondsUntilRoom(at: now)
        lock.unlock()
        if let refusal { return Self.problem(429, body: refusal.body, retryAfter: refusal.retryAfter) }
        let detail = (entry?.violations ?? []).map(\.description).joined(separator: "; ")
        switch status {
        case 200, 201:
            var response = HTTPResponse.json(status, document ?? ["slug": .string(target)])
            response.headers.append(("X-Resource-Action", entry?.created == true ? "created" : "updated"))
            return response
        case 404:
            return Self.problem(404, "activity.not_found", "activity not found")
        case 409:
            return Self.problem(
                409,
                body: [
                    "type": "https://pushward.app/errors/conflict", "title": "Conflict", "status": 409,
                    "code": "activity.limit_exceeded",
                    "detail": .string("activity limit reached (max \(limits.activitiesPerAccount))"),
                ], retryAfter: retryAfter)
        case 400:
            return Self.problem(400, entry?.code ?? "request.body_invalid", detail)
        default:
            // POST's schema errors carry no code (the documented 422 "validation failed"); PATCH's
            // content errors are `activity.content_invalid`.
            guard let code = entry?.code else {
                return Self.problem(
                    422,
                    body: [
                        "title": "Unprocessable Entity", "status": 422, "detail": "validation failed",
                        "errors": .array(
                            (entry?.violations ?? []).map {
                                ["location": .string("body." + $0.field), "message": .string($0.rule)]
                            }),
                    ])
            }
            return Self.problem(422, code, detail)
        }
    }

    /// `GET /activities`: `state` (ongoing, ended or preempted, any case; anything else is
    /// `400 activity.state_invalid`), `limit` 1–100 (default 50) and the `after` cursor (the last
    /// slug of the previous page); items sorted by slug, `next_cursor` unless it is the last page.
    private func list(_ query: [String: String], at now: UnixTime) -> HTTPResponse {
        let wanted = query["state"]?.lowercased()
        if let wanted, !["ongoing", "ended", "preempted"].contains(wanted) {
            return Self.problem(
                400, "activity.state_invalid",
                "invalid activity state: \"\(query["state"] ?? "")\", must be one of ongoing, ended, preempted")
        }
        var limit = 50
        if let text = query["limit"] {
            guard let value = Int(text), (1...100).contains(value) else {
                return Self.problem(
                    422,
                    body: [
                        "title": "Unprocessable Entity", "status": 422, "detail": "validation failed",
                        "errors": [["location": "query.limit", "message": "expected number 1-100"]],
                    ])
            }
            limit = value
        }
        lock.lock()
        let slugs = state.list(state: wanted, at: now).filter { slug in query["after"].map { slug > $0 } ?? true }
        let page = slugs.prefix(limit)
        let items = page.compactMap { state.document($0) }
        lock.unlock()
        var document: [String: JSONValue] = ["items": .array(items)]
        if slugs.count > limit, let last = page.last { document["next_cursor"] = .string(last) }
        return HTTPResponse.json(200, .object(document))
    }

    /// The query string's items, percent-decoded (the last of a repeated name wins).
    static func queryItems(_ query: String?) -> [String: String] {
        var items: [String: String] = [:]
        for pair in (query ?? "").split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0]).removingPercentEncoding ?? String(parts[0])
            let value = parts.count > 1 ? String(parts[1]).removingPercentEncoding ?? String(parts[1]) : ""
            items[name] = value
        }
        return items
    }

    /// `POST /widgets` (an upsert, 201 with `X-Resource-Action`) and `PATCH /widgets/{slug}` (a
    /// merge patch of an existing widget): validated as `WidgetContract` says, counted against the
    /// widget quota (the POST too: whether PushWard charges it is uncertain, so the fake does).
    private func widget(_ request: HTTPRequest, body: JSONValue?, contentType: String, at now: UnixTime)
        -> HTTPResponse
    {
        guard let body else { return Self.problem(400, "request.body_required", "the body is not JSON") }
        lock.lock()
        defer { lock.unlock() }
        if let widgetLimit, widgetsUsed >= widgetLimit {
            let reset = FakeQuota.startOfNextMonth(after: now)
            return Self.problem(
                429,
                body: [
                    "code": "quota.exceeded", "status": 429, "detail": "quota exceeded for widget_updates",
                    "kind": "widget_updates", "used": .number(Double(widgetsUsed)),
                    "limit": .number(Double(widgetLimit)), "reset_at": .string(FakeQuota.rfc3339(reset)),
                ], retryAfter: Int((reset - now).rounded(.up)))
        }
        switch request.method {
        case "POST" where request.path == "/widgets":
            guard contentType == "application/json" else {
                return Self.problem(415, "request.unsupported_media_type", "POST takes application/json")
            }
            let violations = WidgetContract.postViolations(body)
            guard violations.isEmpty else {
                widgetViolations += violations
                return Self.problem(
                    422, "widget.content_invalid", violations.map(\.description).joined(separator: "; "))
            }
            let slug = body["slug"]?.stringValue ?? ""
            let existed = widgetStore[slug] != nil
            if !existed, widgetStore.count >= state.limits.widgetsPerAccount {
                // The documented answer for the widget cap is a 429, unlike the activities' 409.
                return Self.problem(
                    429,
                    body: [
                        "type": "https://pushward.app/errors/too-many-requests", "title": "Too Many Requests",
                        "status": 429, "code": "widget.limit_exceeded",
                        "detail": .string("widget limit reached (max \(state.limits.widgetsPerAccount))"),
                    ])
            }
            widgetStore[slug] = StoredWidget(
                name: body["name"]?.stringValue ?? "", content: body["content"]?.objectValue ?? [:],
                staleAfter: body["stale_after"]?.intValue, updatedAt: now,
                updates: (widgetStore[slug]?.updates ?? 0) + 1)
            widgetsUsed += 1
            var response = HTTPResponse.json(201, ["slug": .string(slug)])
            response.headers.append(("X-Resource-Action", existed ? "updated" : "created"))
            return response
        case "PATCH":
            // The OpenAPI document names only this type (some prose says plain JSON is taken too).
            guard contentType == "application/merge-patch+json" else {
                return Self.problem(415, "request.unsupported_media_type", "PATCH takes application/merge-patch+json")
            }
            let slug = String(request.path.dropFirst("/widgets/".count)).removingPercentEncoding ?? ""
            guard var stored = widgetStore[slug] else {
                return Self.problem(404, "widget.not_found", "no widget \(slug)")
            }
            let violations = WidgetContract.patchViolations(body, stored: stored.content)
            guard violations.isEmpty else {
                widgetViolations += violations
                return Self.problem(
                    422, "widget.content_invalid", violations.map(\.description).joined(separator: "; "))
            }
            if let patch = body["content"] {
                stored.content = MergePatch.apply(patch, to: .object(stored.content)).objectValue ?? [:]
            }
            if let name = body["name"]?.stringValue { stored.name = name }
            if let stale = body["stale_after"] { stored.staleAfter = stale.intValue }
            stored.updatedAt = now
            stored.updates += 1
            widgetStore[slug] = stored
            widgetsUsed += 1
            return HTTPResponse.json(200, ["slug": .string(slug)])
        default:
            return Self.problem(404, "route.not_found", "\(request.method) \(request.path)")
        }
    }

    /// `POST /notifications`: validated, the activity it names must exist, `target` only with an
    /// organisation key, counted against the notification quota, then recorded and answered 201
    /// the way PushWard does (`delivery: all`).
    private func notify(_ body: JSONValue?, at now: UnixTime) -> HTTPResponse {
        guard let body else { return Self.problem(400, "request.malformed", "the body is not JSON") }
        lock.lock()
        defer { lock.unlock() }
        let violations = NotificationContract.violations(body)
        if !violations.isEmpty {
            notificationViolations += violations
            return Self.problem(422, "request.validation_failed", violations.map(\.description).joined(separator: "; "))
        }
        if body["target"] != nil, keyKind == .personal {
            return Self.problem(422, "request.validation_failed", "target: only organisation keys may set a target")
        }
        if let slug = body["activity_slug"]?.stringValue, state.activities[slug] == nil {
            return Self.problem(422, "notification.activity_not_found", "no activity \(slug)")
        }
        if let limit = notificationLimit, notificationsUsed >= limit {
            let reset = state.quota.resetsAt ?? now + 86_400
            let refusal: JSONValue = [
                "status": 429, "code": "quota.exceeded", "kind": "notifications",
                "detail": "quota exceeded for notifications",
                "used": .number(Double(notificationsUsed)), "limit": .number(Double(limit)),
                "reset_at": .string(FakeQuota.rfc3339(reset)),
            ]
            return Self.problem(429, body: refusal, retryAfter: max(0, Int((reset - now).rounded(.up))))
        }
        notificationsUsed += 1
        let id = Int64(notifications.count + 1)
        notifications.append(Notification(id: id, body: body, at: now))
        var created = body.objectValue ?? [:]
        created["id"] = .number(Double(id))
        created["pushed"] = true
        created["delivery"] = "all"
        created["created_at"] = .string(FakeQuota.rfc3339(now))
        return HTTPResponse.json(201, .object(created))
    }

    static func problem(_ status: Int, _ code: String, _ detail: String) -> HTTPResponse {
        problem(status, body: ["code": .string(code), "detail": .string(detail), "status": .number(Double(status))])
    }

    /// Every problem the fake answers, injected or earned: `application/problem+json`, with
    /// `Retry-After` in whole seconds when given.
    static func problem(_ status: Int, body: JSONValue, retryAfter: Int? = nil) -> HTTPResponse {
        var response = HTTPResponse.json(status, body)
        response.headers = [("Content-Type", "application/problem+json")]
        if let retryAfter { response.headers.append(("Retry-After", String(retryAfter))) }
        return response
    }

    /// Forgets the requests received so far (`requests` and the contract log start empty again;
    /// activities and the quota stay), for a soak that would otherwise keep every one. Returns
    /// how many requests and contract violations were forgotten, for the caller to count.
    @discardableResult
    public func forgetRequests() -> (requests: Int, violations: Int) {
        lock.lock()
        defer { lock.unlock() }
        let requests = received.count
        received.removeAll()
        return (requests, state.clearLog().violations)
    }

    /// Deletes an activity, as a user might in the PushWard app: the next PATCH gets 404.
    public func deleteActivity(_ slug: String) {
        lock.lock()
        state.remove(slug)
        lock.unlock()
    }

    /// Creates an activity as another client of the account would (not through the bridge's
    /// requests, not logged, not charged): for tests of what the bridge must leave alone.
    /// `ongoing` starts it (and may evict), otherwise it is ended, as a finished one lingers.
    public func insertForeignActivity(_ slug: String, name: String = "Other", priority: Int = 0, ongoing: Bool = false)
    {
        let now = clock()
        lock.lock()
        defer { lock.unlock() }
        var scratch = state
        scratch.handle(
            PushWardRequest(
                method: .post, slug: slug,
                body: ["slug": .string(slug), "name": .string(name), "priority": .number(Double(priority))]),
            at: now)
        let content: JSONValue = ["template": "generic", "progress": 0, "state": .string(name)]
        scratch.handle(
            PushWardRequest(
                method: .patch, slug: slug, body: ["state": ongoing ? "ongoing" : "ended", "content": content]), at: now
        )
        scratch.quota = state.quota
        let log = state.log
        state = scratch
        state.replaceLog(log)
    }
}
