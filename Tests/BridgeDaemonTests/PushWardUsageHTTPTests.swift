import BridgeCore
import BridgeDaemon
import BridgeTestSupport
import Foundation
import PushWardClient
import Testing
import WebhookServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// `GET /auth/me` and the Live Activity update quota, over HTTP: the client against the in-repo
/// fake PushWard, which counts what it accepts and refuses with `429 quota.exceeded` once the
/// limit is reached (spec/PUSHWARD-MORE.md §1 and §7).
@Suite("PushWard usage over HTTP", .timeLimit(.minutes(2)))
struct PushWardUsageHTTPTests {
    static let slug = "gh-usage"
    static let post = PushWardRequest(
        method: .post, slug: slug, body: ["slug": .string(slug), "name": "CI", "priority": 5])
    static let content: JSONValue = [
        "template": "steps", "progress": 0.5, "total_steps": 3, "current_step": 1, "state": "Build",
    ]
    static let patch = PushWardRequest(method: .patch, slug: slug, body: ["state": "ongoing", "content": content])

    static func client(_ fake: FakePushWardServer, apiKey: String? = nil) -> PushWardClient {
        PushWardClient(configuration: .init(baseURL: fake.baseURL, apiKey: apiKey ?? fake.apiKey, version: "test"))
    }

    /// One raw request, so the tests see the wire rather than what the client made of it.
    static func raw(
        _ fake: FakePushWardServer, _ method: String, _ path: String, body: JSONValue? = nil
    ) async throws -> (status: Int, headers: [AnyHashable: Any], json: JSONValue?) {
        var request = URLRequest(url: URL(string: fake.baseURL + path)!)
        request.httpMethod = method
        request.setValue("Bearer " + fake.apiKey, forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = body.canonicalData
            request.setValue(
                method == "PATCH" ? "application/merge-patch+json" : "application/json",
                forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        return (http.statusCode, http.allHeaderFields, try? JSONValue(parsing: data))
    }

    /// `YYYYMM` of the UTC month holding `time`.
    static func periodMonth(_ time: UnixTime) -> Int {
        let text = GitHubTimestamp.format(time)
        return Int(text.prefix(4) + text.dropFirst(5).prefix(2)) ?? 0
    }

    @Test("the usage request carries the key, Accept and User-Agent, and no body")
    func usageRequestHeaders() async throws {
        let fake = try FakePushWardServer()
        let client = Self.client(fake)
        let request = try #require(client.usageURLRequest())
        #expect(request.httpMethod == "GET")
        #expect(request.url?.absoluteString == fake.baseURL + "/auth/me")
        #expect(request.httpBody == nil)
        #expect(request.value(forHTTPHeaderField: "Content-Type") == nil)

        _ = await client.usage()
        let received = try #require(fake.requests.last)
        #expect(received.method == "GET" && received.path == "/auth/me" && received.status == 200)
        #expect(received.headers["authorization"] == "Bearer " + fake.apiKey)
        #expect(received.headers["accept"] == "application/json, application/problem+json")
        #expect(received.headers["user-agent"] == "pushward-bridge/test")
    }

    @Test("usage counts every accepted POST and PATCH, and nothing else")
    func countsAcceptedUpdates() async throws {
        let fake = try FakePushWardServer()
        let resetAt = GitHubTimestamp.parse("2031-01-01T00:00:00Z")!
        fake.setQuota(limit: 250, resetsAt: resetAt)
        let client = Self.client(fake)
        #expect(
            await client.usage()
                == .usage(
                    PushWardUsage(
                        liveActivityUpdatesUsed: 0, liveActivityUpdatesLimit: 250, widgetUpdatesUsed: 0,
                        widgetUpdatesLimit: 50, notificationsUsed: 0, notificationsLimit: 500, quotaResetsAt: resetAt,
                        quotaPeriodMonth: Self.periodMonth(Date().timeIntervalSince1970), subscribed: false,
                        activityCount: 0)))

        let unknown = PushWardRequest(method: .patch, slug: "gh-never-created", body: ["priority": 3])
        guard case .problem(let notFound) = await client.send(unknown) else {
            Issue.record("a PATCH of an unknown slug was accepted")
            return
        }
        #expect(notFound.status == 404)
        #expect(await client.send(Self.post) == .success(status: 201))
        #expect(await client.send(Self.patch) == .success(status: 200, state: "ongoing"))
        fake.sendsInvalidRequestsOnPurpose("a refused update must cost nothing")
        let invalid = PushWardRequest(method: .patch, slug: Self.slug, body: ["content": ["progress": 2]])
        guard case .problem(let problem) = await client.send(invalid) else {
            Issue.record("an invalid PATCH was accepted")
            return
        }
        #expect(problem.status == 422)
        #expect(await client.send(Self.post) == .success(status: 201))

        guard case .usage(let usage) = await client.usage() else {
            Issue.record("no usage")
            return
        }
        #expect(usage.liveActivityUpdatesUsed == 3, "two POSTs and one PATCH; the 404 and 422 are free")
        #expect(usage.liveActivityUpdatesRemaining == 247)
        #expect(usage.activityCount == 1, "the account holds the one activity, posted twice")
        #expect(await client.usage() == .usage(usage), "reading the usage costs nothing")
        #expect(fake.quota.used == 3)
    }

    @Test("an unlimited account: the limit is omitted, and the client reads it as nil")
    func unlimitedOmitsTheLimit() async throws {
        let fake = try FakePushWardServer()
        #expect(await Self.client(fake).send(Self.post) == .success(status: 201))
        let answer = try await Self.raw(fake, "GET", "/auth/me")
        #expect(answer.status == 200)
        let user = try #require(answer.json?.objectValue)
        #expect(user["live_activity_updates_used"] == 1)
        #expect(user.keys.contains("live_activity_updates_limit") == false)
        #expect(user.keys.contains("widget_updates_limit") == false)
        #expect(user["subscribed"] == true)
        #expect(user["activity_count"] == 1)
        #expect(user["quota_resets_at"]?.stringValue.flatMap(GitHubTimestamp.parse) != nil)

        guard case .usage(let usage) = await Self.client(fake).usage() else {
            Issue.record("no usage")
            return
        }
        #expect(usage.liveActivityUpdatesUsed == 1)
        #expect(usage.liveActivityUpdatesLimit == nil)
        #expect(usage.liveActivityUpdatesRemaining == nil)
        #expect(usage.subscribed == true)
    }

    /// The whole seconds a `Retry-After` may say for a reset at `resetAt`, asked at `askedAt` and
    /// answered by now: bounded by the clock on both sides rather than by a guess of how long the
    /// answer took (a loaded machine took over 10 s once).
    static func secondsUntil(_ resetAt: Double, askedAt: Double) -> ClosedRange<Int> {
        let answeredAt = Date().timeIntervalSince1970
        return Int((resetAt - answeredAt).rounded(.down)) - 1...Int((resetAt - askedAt).rounded(.up)) + 1
    }

    @Test("once the limit is reached, updates get 429 quota.exceeded with the documented body and Retry-After")
    func refusesOnceSpent() async throws {
        let fake = try FakePushWardServer()
        let resetAt = (Date().timeIntervalSince1970 + 3_600).rounded(.down)
        fake.setQuota(limit: 2, resetsAt: resetAt)
        let client = Self.client(fake)
        #expect(await client.send(Self.post) == .success(status: 201))
        #expect(await client.send(Self.patch) == .success(status: 200, state: "ongoing"))

        var askedAt = Date().timeIntervalSince1970
        let refused = try await Self.raw(fake, "PATCH", "/activities/" + Self.slug, body: Self.patch.body)
        #expect(refused.status == 429)
        #expect((refused.headers["Content-Type"] as? String) == "application/problem+json")
        let retryAfter = try #require((refused.headers["Retry-After"] as? String).flatMap(Int.init))
        #expect(
            Self.secondsUntil(resetAt, askedAt: askedAt).contains(retryAfter),
            "seconds until reset_at, however long the answer took")
        let body = try #require(refused.json)
        #expect(body["status"] == 429)
        #expect(body["code"] == "quota.exceeded")
        #expect(body["kind"] == "live_activity_updates")
        #expect(body["used"] == 2)
        #expect(body["limit"] == 2)
        #expect(body["reset_at"] == .string(GitHubTimestamp.format(resetAt)))
        #expect(body["title"] == "Too Many Requests")

        // POST counts too, so it is refused as well; the client reads every quota member.
        askedAt = Date().timeIntervalSince1970
        guard case .problem(let problem) = await client.send(Self.post) else {
            Issue.record("a POST went through a spent quota")
            return
        }
        #expect(problem.status == 429)
        #expect(problem.code == "quota.exceeded")
        #expect(problem.quotaKind == "live_activity_updates")
        #expect(problem.quotaUsed == 2)
        #expect(problem.quotaLimit == 2)
        #expect(problem.resetAt == resetAt)
        #expect(problem.retryAfter.map { Self.secondsUntil(resetAt, askedAt: askedAt).contains(Int($0)) } == true)

        // Refusals are not charged, and nothing refused was applied.
        #expect(fake.activities[Self.slug]?.state == "ongoing")
        guard case .usage(let usage) = await client.usage() else {
            Issue.record("no usage")
            return
        }
        #expect(usage.liveActivityUpdatesUsed == 2)
        #expect(usage.liveActivityUpdatesRemaining == 0)
        #expect(usage.quotaResetsAt == resetAt)

        // Upgrading clears it at once.
        fake.setQuota(limit: nil, resetsAt: resetAt)
        #expect(await client.send(Self.patch) == .success(status: 200, state: "ongoing"))
        #expect(fake.violations.isEmpty)
    }

    @Test("the dispatcher pauses on the counted quota until reset_at, then the latest state goes out")
    func dispatcherHonoursTheCountedQuota() async throws {
        typealias EndToEnd = DispatchEndToEndTests
        let fake = try FakePushWardServer()
        // The period resets 3 s after the refusal, whenever that comes: a reset fixed in advance
        // passed before the refusal under ThreadSanitizer, and the rolled-over period then moved
        // reset_at a month on.
        fake.setQuota(limit: 2, resetsAt: Date().timeIntervalSince1970 + 3_600, resetsAfterRefusal: 3)
        let bridge = try EndToEnd.Bridge(fake: fake)
        for event in EndToEnd.script.deliveries(waves: EndToEnd.waves) { try await bridge.deliver(event) }
        #expect(await EndToEnd.eventually { fake.requests.contains { $0.status == 429 } })
        // Upgraded: the fake would take updates at once, but the bridge waits for the reset_at it was told.
        fake.setQuota(limit: nil)
        #expect(await EndToEnd.eventually(timeout: 30) { EndToEnd.finalCard(fake)?.state == "ended" })
        await bridge.daemon.shutdown()
        try EndToEnd.expectEndedSuccess(fake)
        let requests = fake.requests
        let refused = try #require(requests.firstIndex { $0.status == 429 })
        #expect(refused == 2, "the two updates the limit allows, then the refusal")
        #expect(requests.filter { $0.status == 429 }.count == 1, "nothing is sent while the quota is spent")
        let resumed = try #require(requests.indices.contains(refused + 1) ? requests[refused + 1] : nil)
        // Not before the reset the refusal named: 3 s after it, to the whole second.
        #expect(resumed.at >= requests[refused].at + 3 - 0.1)
        #expect(bridge.logs.all.filter { $0.contains("quota exhausted") }.count == 1)
    }

    @Test("a problem or an unreadable body from /auth/me is said as such")
    func usageFailures() async throws {
        let fake = try FakePushWardServer()
        let refused = await Self.client(fake, apiKey: "hlk_wrong").usage()
        guard case .problem(let problem) = refused else {
            Issue.record("a wrong key read usage: \(refused)")
            return
        }
        #expect(problem.status == 401 && problem.code == "token.invalid")

        fake.setFault { method, _, _ in
            method == "GET" ? .status(503, code: "service.unavailable", retryAfter: 5) : nil
        }
        guard case .problem(let unavailable) = await Self.client(fake).usage() else {
            Issue.record("a 503 read as usage")
            return
        }
        #expect(unavailable.status == 503 && unavailable.retryAfter == 5)

        let proxy = try HTTPServer(configuration: .init(listen: "127.0.0.1:0")) { _ in
            HTTPResponse(status: 200, headers: [("Content-Type", "text/html")], body: Data("<html>ok</html>".utf8))
        }
        defer { proxy.stop() }
        let client = PushWardClient(
            configuration: .init(baseURL: "http://127.0.0.1:\(proxy.port)", apiKey: "hlk_x", version: "test"))
        #expect(await client.usage() == .unreadable(status: 200, .invalidJSON("<html>ok</html>")))
    }

    @Test("the transports: HTTP asks PushWard, dry run reports unlimited")
    func transports() async throws {
        let fake = try FakePushWardServer()
        fake.setQuota(limit: 10, used: 4)
        guard case .usage(let usage) = await HTTPTransport(client: Self.client(fake)).usage() else {
            Issue.record("no usage")
            return
        }
        #expect(usage.liveActivityUpdatesUsed == 4 && usage.liveActivityUpdatesLimit == 10)
        #expect(await DryRunTransport().usage() == .usage(.unlimited))
    }
}
