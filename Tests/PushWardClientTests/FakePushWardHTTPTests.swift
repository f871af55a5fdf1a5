import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The fake PushWard over HTTP, as PushWard's OpenAPI document describes the answers: the rate
/// limit, the account caps, `DELETE`, the two reads, `?upsert=true` and the `Activity` bodies.
@Suite("Fake PushWard over HTTP")
struct FakePushWardHTTPTests {
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: JSONValue?
    }

    static func call(
        _ fake: FakePushWardServer, _ method: String, _ path: String, _ body: JSONValue? = nil,
        contentType: String? = nil
    ) async throws -> Answer {
        var request = URLRequest(url: URL(string: fake.baseURL + path)!)
        request.httpMethod = method
        request.setValue("Bearer " + fake.apiKey, forHTTPHeaderField: "Authorization")
        if let body {
            request.httpBody = body.canonicalData
            let type = contentType ?? (method == "PATCH" ? "application/merge-patch+json" : "application/json")
            request.setValue(type, forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await URLSession.shared.data(for: request)
        let http = try #require(response as? HTTPURLResponse)
        var headers: [String: String] = [:]
        for (name, value) in http.allHeaderFields {
            headers[String(describing: name).lowercased()] = String(describing: value)
        }
        return Answer(status: http.statusCode, headers: headers, body: try? JSONValue(parsing: data))
    }

    static func create(_ slug: String, priority: Int = 5) -> JSONValue {
        ["slug": .string(slug), "name": .string(slug), "priority": .number(Double(priority))]
    }

    static let start: JSONValue = [
        "state": "ongoing", "content": ["template": "generic", "progress": 0.5, "state": "Running"],
    ]

    @Test("the 201st request in a minute is 429 rate_limit.exceeded with Retry-After: 60, on every endpoint")
    func rateLimit() async throws {
        // The fake's clock held: all 21 requests fall in one minute however slowly they go (a
        // loaded machine once took 70 s over them).
        let held = Date().timeIntervalSince1970
        let fake = try FakePushWardServer(clock: { held })
        #expect(fake.limits == .documented)
        // Fewer requests in the documented minute, so the test does not send hundreds; the window's
        // sliding is FakeRateLimiterTests' (on a clock of its own).
        fake.setLimits(FakeLimits(requestsPerWindow: 20))
        for index in 0..<20 {
            let path = index % 2 == 0 ? "/auth/me" : "/activities"
            #expect(try await Self.call(fake, "GET", path).status == 200)
        }
        let refused = try await Self.call(fake, "POST", "/activities", Self.create("ci"))
        #expect(refused.status == 429)
        #expect(refused.headers["retry-after"] == "60")
        #expect(refused.body?["code"] == "rate_limit.exceeded")
        #expect(refused.body?["retry_after_ms"] == 60_000)
        #expect(fake.activities["ci"] == nil, "nothing applied")
        #expect(fake.rateLimitCounts.refused == 1)
        #expect(fake.rateLimitCounts.peak == 20)
        #expect(fake.requests.last?.status == 429)
    }

    @Test("POST and PATCH answer the Activity, X-Resource-Action says created or updated, ?upsert=true creates")
    func answers() async throws {
        let fake = try FakePushWardServer()
        let created = try await Self.call(fake, "POST", "/activities", Self.create("ci"))
        #expect(created.status == 201)
        #expect(created.headers["x-resource-action"] == "created")
        #expect(created.body?["slug"] == "ci" && created.body?["state"] == "ended" && created.body?["kind"] == "owned")
        let again = try await Self.call(fake, "POST", "/activities", Self.create("ci", priority: 3))
        #expect(again.status == 201)
        #expect(again.headers["x-resource-action"] == "updated")
        #expect(again.body?["priority"] == 3)

        let patched = try await Self.call(fake, "PATCH", "/activities/ci", Self.start)
        #expect(patched.status == 200)
        #expect(patched.body?["state"] == "ongoing")
        #expect(patched.body?["content"]?["progress"] == 0.5)

        #expect(try await Self.call(fake, "PATCH", "/activities/new", Self.start).status == 404)
        let upserted = try await Self.call(fake, "PATCH", "/activities/new?upsert=true", Self.start)
        #expect(upserted.status == 201)
        #expect(upserted.headers["x-resource-action"] == "created")
        #expect(upserted.body?["name"] == "new")

        fake.sendsInvalidRequestsOnPurpose("the fake's answers to a schema error, a bad state and a bad priority")
        let schema = try await Self.call(fake, "POST", "/activities", ["name": "no slug", "priority": 1])
        #expect(schema.status == 422, "a schema error on POST is 422")
        #expect(schema.body?["errors"]?.arrayValue?.isEmpty == false)
        let state = try await Self.call(fake, "PATCH", "/activities/ci", ["state": "paused"])
        #expect(state.status == 400)
        #expect(state.body?["code"] == "activity.state_invalid")
        let priority = try await Self.call(fake, "PATCH", "/activities/ci", ["priority": 42])
        #expect(priority.status == 400)
        #expect(priority.body?["code"] == "activity.priority_invalid")
    }

    @Test("GET /activities filters by state (any case), 400 on a bad one; GET /activities/{slug}; DELETE 204 then 404")
    func readsAndDelete() async throws {
        let fake = try FakePushWardServer()
        for index in 0..<6 {
            #expect(try await Self.call(fake, "POST", "/activities", Self.create("run-\(index)")).status == 201)
            #expect(try await Self.call(fake, "PATCH", "/activities/run-\(index)", Self.start).status == 200)
        }
        #expect(fake.evictions.map(\.slug) == ["run-0"])
        let preempted = try await Self.call(fake, "GET", "/activities?state=PREEMPTED")
        #expect(preempted.status == 200)
        #expect(fake.requests.last?.query == "state=PREEMPTED")
        #expect(preempted.body?["items"]?.arrayValue?.map { $0["slug"] } == ["run-0"])
        #expect(preempted.body?["next_cursor"] == nil)
        let ongoing = try await Self.call(fake, "GET", "/activities?state=ongoing&limit=3")
        #expect(ongoing.body?["items"]?.arrayValue?.map { $0["slug"] } == ["run-1", "run-2", "run-3"])
        #expect(ongoing.body?["next_cursor"] == "run-3")
        let rest = try await Self.call(fake, "GET", "/activities?state=ongoing&after=run-3")
        #expect(rest.body?["items"]?.arrayValue?.map { $0["slug"] } == ["run-4", "run-5"])
        fake.sendsInvalidRequestsOnPurpose("the fake's answer to an unknown state filter")
        let bad = try await Self.call(fake, "GET", "/activities?state=paused")
        #expect(bad.status == 400)
        #expect(bad.body?["code"] == "activity.state_invalid")

        let one = try await Self.call(fake, "GET", "/activities/run-0")
        #expect(one.status == 200 && one.body?["state"] == "preempted")
        let update = try await Self.call(fake, "PATCH", "/activities/run-0", ["content": ["progress": 0.7]])
        #expect(update.status == 400 && update.body?["code"] == "activity.state_invalid")

        #expect(try await Self.call(fake, "DELETE", "/activities/run-0").status == 204)
        #expect(try await Self.call(fake, "DELETE", "/activities/run-0").status == 404)
        #expect(try await Self.call(fake, "GET", "/activities/run-0").status == 404)
        #expect(fake.deletions.map(\.slug) == ["run-0"])
        #expect(fake.quota.used == 12, "reads and deletes cost no update")
    }

    @Test(
        "the 51st activity is 409 activity.limit_exceeded with Retry-After; the 51st widget 429 widget.limit_exceeded")
    func accountCaps() async throws {
        let fake = try FakePushWardServer()
        fake.setLimits(FakeLimits(requestsPerWindow: 1_000))
        fake.insertForeignActivity("theirs")
        #expect(fake.requests.isEmpty && fake.activities["theirs"]?.state == "ended")
        for index in 0..<49 {
            #expect(try await Self.call(fake, "POST", "/activities", Self.create("run-\(index)")).status == 201)
        }
        let full = try await Self.call(fake, "POST", "/activities", Self.create("run-49"))
        #expect(full.status == 409)
        #expect(full.body?["code"] == "activity.limit_exceeded")
        let retryAfter = try #require(full.headers["retry-after"].flatMap(Int.init))
        #expect(retryAfter > 0)
        #expect(fake.violations.isEmpty)

        for index in 0..<50 {
            let widget: JSONValue = [
                "slug": .string("w\(index)"), "name": "W", "content": ["template": "progress", "value": 0.5],
            ]
            #expect(try await Self.call(fake, "POST", "/widgets", widget).status == 201)
        }
        let widget: JSONValue = ["slug": "w50", "name": "W", "content": ["template": "progress", "value": 0.5]]
        let refused = try await Self.call(fake, "POST", "/widgets", widget)
        #expect(refused.status == 429)
        #expect(refused.body?["code"] == "widget.limit_exceeded")
        let existing: JSONValue = ["slug": "w3", "name": "W", "content": ["template": "progress", "value": 0.9]]
        #expect(try await Self.call(fake, "POST", "/widgets", existing).status == 201, "an upsert of one it holds")
    }

    @Test("every request goes to the request log as a JSON line naming the test, those sent invalid on purpose marked")
    func requestLog() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("fake-log-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fake = try FakePushWardServer(requestLog: directory.path)
        let name = "CI \u{202E}🚀\u{0}"
        #expect(
            try await Self.call(fake, "POST", "/activities", ["slug": "ci", "name": .string(name), "priority": 1])
                .status == 201)
        #expect(try await Self.call(fake, "GET", "/activities?state=ongoing").status == 200)
        fake.sendsInvalidRequestsOnPurpose("a schema error")
        #expect(try await Self.call(fake, "PATCH", "/activities/ci", ["state": 1]).status == 422)

        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        try #require(files.count == 1)
        let text = try String(contentsOf: directory.appendingPathComponent(files[0]), encoding: .utf8)
        let lines = try text.split(separator: "\n").map { try JSONValue(parsing: Data($0.utf8)) }
        try #require(lines.count == 3)
        #expect(lines[0]["origin"]?.stringValue?.hasPrefix("PushWardClientTests/FakePushWardHTTPTests.swift:") == true)
        #expect(lines[0]["method"] == "POST" && lines[0]["path"] == "/activities" && lines[0]["status"] == 201)
        #expect(lines[0]["content_type"] == "application/json")
        #expect(lines[0]["body"]?["name"] == .string(name), "the body as sent, hostile text intact")
        #expect(lines[1]["query"] == "state=ongoing" && lines[1]["body"] == nil)
        #expect(lines[0]["unchecked"] == nil && lines[1]["unchecked"] == nil)
        #expect(lines[2]["unchecked"] == "a schema error")
        #expect(lines[2]["content_type"] == "application/merge-patch+json")
    }
}
