import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing
import WebhookServer

/// The admin listener's JSON API and status page, on a database filled by replaying the recorded
/// attempt-10 run and a scripted matrix run through a daemon over HTTP.
@Suite("Admin API and status page", .serialized, .timeLimit(.minutes(2)))
struct AdminAPITests {
    static let secret = "admin-api-secret"
    static let recordedRunID = 6_454_805_877
    static let recordedURL = "https://github.com/foo/webhook-testing/actions/runs/6454805877/attempts/10"
    static let matrixRunID = 8_001
    static let matrixURL = "https://github.com/acme/widgets/actions/runs/8001"

    /// A daemon in-process on ephemeral ports, with its scratch directory.
    final class Admin: @unchecked Sendable {
        let daemon: Daemon
        let directory: ScratchDirectory
        let databasePath: String

        init(daemon: Daemon, directory: ScratchDirectory, databasePath: String) {
            self.daemon = daemon
            self.directory = directory
            self.databasePath = databasePath
        }

        /// `transport` nil: dry-run mode, every request recorded as it would have been sent.
        /// `fidelity` "auto" lets the budget planner decide (and record) each run's level.
        static func start(
            adminToken: String? = nil, transport: (any PushWardTransport)? = nil, fidelity: String = "full"
        ) async throws -> Admin {
            let directory = try ScratchDirectory()
            let database = directory.path("bridge.sqlite")
            var root: [String: JSONValue] = [
                "listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": .string(database),
                "github": ["webhook_secrets": [.string(AdminAPITests.secret)]],
                "pushward": [
                    "end_delay": "0s", "end_display_time": "0s", "min_update_interval": "0s",
                    "fidelity": .string(fidelity),
                    "coalesce": "0s", "max_updates_per_hour": 3_600,
                ],
            ]
            if let adminToken { root["admin_token"] = .string(adminToken) }
            let configuration = try BridgeConfiguration(json: JSONValue.object(root).canonicalData)
            let logger = Logger(label: "test", minimumLevel: .error, sink: { _ in })
            let daemon = try await offPool {
                try Daemon.start(configuration: configuration, logger: logger, transport: transport)
            }
            return Admin(daemon: daemon, directory: directory, databasePath: database)
        }

        func stop() async throws {
            let daemon = daemon
            try await offPool { daemon.stop(deadline: 10) }
        }

        /// A request to the admin listener.
        func get(_ target: String, token: String? = nil, method: String = "GET") async throws
            -> HTTPTestClient.Response
        {
            let port = daemon.adminPort
            let headers = token.map { [("Authorization", "Bearer \($0)")] } ?? []
            return try await offPool {
                try HTTPTestClient.request(port: port, method: method, target: target, headers: headers)
            }
        }

        /// One signed delivery to the webhook listener.
        func deliver(event: String, id: String, body: Data) async throws -> Int {
            let port = daemon.port
            let headers = signedHeaders(event: event, id: id, body: body, secret: AdminAPITests.secret)
            return try await offPool {
                try HTTPTestClient.request(port: port, method: "POST", target: "/webhook", headers: headers, body: body)
                    .status
            }
        }

        func deliver(_ events: [WebhookEvent], prefix: String) async throws {
            for (index, event) in events.enumerated() {
                let (name, body) = PayloadEncoder.encode(event)
                #expect(try await deliver(event: name, id: "\(prefix)-\(index + 1)", body: body) == 202)
            }
        }

        func read<T: Sendable>(_ body: @escaping @Sendable (BridgeDatabase) throws -> T) async throws -> T {
            let path = databasePath
            return try await offPool { try body(try BridgeDatabase(path: path, readOnly: true)) }
        }

        /// Waits until every recorded run's card has ended.
        func waitUntilAllEnded(timeout: Double = 30) async throws -> Bool {
            let path = databasePath
            return try await eventually(timeout: timeout) {
                let database = try BridgeDatabase(path: path, readOnly: true)
                return try database.listRuns().allSatisfy { run in
                    try database.session(slug: run.slug)?.stored.session.phase == .ended && run.status == "completed"
                }
            }
        }

        /// Waits until `condition` holds on the runs list.
        func waitForRuns(_ condition: @escaping @Sendable ([BridgeDatabase.RunListing]) -> Bool) async throws -> Bool {
            let path = databasePath
            return try await eventually { condition(try BridgeDatabase(path: path, readOnly: true).listRuns()) }
        }
    }

    /// A matrix run of acme/widgets: lint, then three test shards of which the second fails. The
    /// first part leaves the shards running; the second finishes them and the run.
    static func matrixRun(start: UnixTime) -> (running: [WebhookEvent], finishing: [WebhookEvent]) {
        let script = RunScript(runID: matrixRunID, runNumber: 7, workflow: "CI", start: start, firstJobID: 70_000)
        var running = [script.run("requested", at: 0), script.run("in_progress", at: 1)]
        running.append(script.job(70_000, "lint", "queued", createdAt: 2))
        running.append(script.job(70_000, "lint", "in_progress", createdAt: 2, startedAt: 4))
        running.append(
            script.job(70_000, "lint", "completed", createdAt: 2, startedAt: 4, completedAt: 20, conclusion: "success"))
        let shards = (1...3).map { (70_000 + $0, "test (shard-\($0))") }
        for (id, name) in shards { running.append(script.job(id, name, "queued", createdAt: 22)) }
        for (id, name) in shards { running.append(script.job(id, name, "in_progress", createdAt: 22, startedAt: 24)) }
        var finishing: [WebhookEvent] = []
        for (id, name) in shards {
            finishing.append(
                script.job(
                    id, name, "completed", createdAt: 22, startedAt: 24, completedAt: 60,
                    conclusion: id == 70_002 ? "failure" : "success"))
        }
        finishing.append(script.run("completed", at: 62, conclusion: "failure"))
        return (running, finishing)
    }

    static func replayRecorded(_ admin: Admin) async throws {
        for name in DaemonFixtures.attempt10 {
            let status = try await admin.deliver(
                event: DaemonFixtures.event(of: name), id: name, body: try DaemonFixtures.data(name))
            #expect(status == 202, "\(name)")
        }
    }

    static func svgCount(_ html: String, role: String = "shown") -> Int {
        html.components(separatedBy: "data-card=\"\(role)\"").count - 1
    }

    @Test("runs, one run, one delivery and the page, while a run is active and after it ends")
    func apiAndPage() async throws {
        let admin = try await Admin.start()
        do {
            try await Self.replayRecorded(admin)
            #expect(try await admin.waitUntilAllEnded(), "the recorded run's card never ended")
            let matrix = Self.matrixRun(start: Date().timeIntervalSince1970 - 120)
            try await admin.deliver(matrix.running, prefix: "matrix")
            #expect(try await admin.waitForRuns { $0.count == 2 })
            let path = admin.databasePath
            let drawn = try await eventually {
                let database = try BridgeDatabase(path: path, readOnly: true)
                let slug = try database.listRuns(repository: "acme/widgets").first?.slug ?? ""
                return try database.session(slug: slug)?.acknowledged?["state"] == "Test 0/3"
            }
            #expect(drawn, "the matrix run's card never showed its test step")

            // The list, as `runs list --json` gives it.
            let list = try await admin.get("/api/runs")
            #expect(list.status == 200)
            #expect(list.headers["content-type"] == "application/json")
            let runs = try #require(try JSONValue(parsing: list.body).arrayValue)
            #expect(Set(runs.compactMap { $0["run_id"]?.intValue }) == [Self.recordedRunID, Self.matrixRunID])
            #expect(runs.first?["run_id"]?.intValue == Self.matrixRunID, "runs still going come first")
            #expect(runs.first?["status"] == "in_progress")
            let expectedList = try await admin.read { database in
                JSONValue.array(try database.listRuns().map(RunDocument.listing))
            }
            #expect(try JSONValue(parsing: list.body) == expectedList)
            let narrowed = try await admin.get("/api/runs?repo=foo%2Fwebhook-testing&limit=5")
            #expect((try JSONValue(parsing: narrowed.body)).arrayValue?.count == 1)

            // One run: the same document as `runs show --json`.
            let shown = try await admin.get("/api/runs/\(Self.recordedRunID)")
            #expect(shown.status == 200)
            let attempts = try #require(try JSONValue(parsing: shown.body).arrayValue)
            let recorded = try #require(attempts.first)
            #expect(attempts.count == 1)
            #expect(recorded["attempt"] == 10)
            #expect(recorded["phase"] == "ended")
            #expect(
                Set(recorded["jobs"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []) == [
                    "pre-commit", "test",
                ])
            #expect(recorded["steps"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["pre-commit", "test"])
            #expect(recorded["desired"]?["content"]?["state"] == "Succeeded")
            #expect(recorded["acknowledged"]?["progress"] == 1)
            #expect(recorded["acknowledged"]?["url"] == .string(Self.recordedURL))
            #expect(recorded["pushes"]?.arrayValue?.first?["kind"] == "create")
            #expect(recorded["pushes"]?.arrayValue?.last?["kind"] == "end")
            #expect(recorded["deliveries"]?.arrayValue?.count == DaemonFixtures.attempt10.count)
            let expectedRun = try await admin.read { try RunDocument.json(database: $0, runID: Self.recordedRunID) }
            #expect(try JSONValue(parsing: shown.body) == expectedRun)

            let matrixShown = try await admin.get("/api/runs/\(Self.matrixRunID)")
            let matrixRun = try #require(try JSONValue(parsing: matrixShown.body).arrayValue?.first)
            #expect(matrixRun["jobs"]?.arrayValue?.count == 4)
            #expect(matrixRun["steps"]?.arrayValue?.compactMap { $0["name"]?.stringValue } == ["lint", "test"])
            #expect(matrixRun["steps"]?.arrayValue?.last?["jobs"] == 3)
            #expect(matrixRun["acknowledged"]?["step_rows"] == [1, 3])

            // One delivery, with its outcome and payload.
            let delivery = try await admin.get("/api/deliveries/workflow_run.completed.attempt10.json")
            #expect(delivery.status == 200)
            #expect(delivery.json?["outcome"] == "applied")
            #expect(delivery.json?["event"] == "workflow_run")
            #expect(delivery.json?["action"] == "completed")
            #expect(delivery.json?["payload"]?["workflow_run"]?["id"]?.intValue == Self.recordedRunID)
            let deliveries = try await admin.get("/api/deliveries?limit=3")
            #expect((try JSONValue(parsing: deliveries.body)).arrayValue?.count == 3)

            // Unknown ids and paths: 404 with a JSON body.
            for target in ["/api/runs/12345", "/api/runs/not-a-number", "/api/deliveries/no-such-delivery", "/nope"] {
                let missing = try await admin.get(target)
                #expect(missing.status == 404, "\(target)")
                #expect(missing.headers["content-type"] == "application/json", "\(target)")
                #expect(missing.json?["error"] == "not_found", "\(target)")
            }
            #expect(try await admin.get("/api/runs", method: "POST").status == 405)

            // The page while the matrix run is active: both cards, their links, and the refresh.
            let active = try await admin.get("/")
            #expect(active.status == 200)
            #expect(active.headers["content-type"] == "text/html; charset=utf-8")
            let html = active.text
            #expect(html.hasPrefix("<!doctype html>"))
            #expect(html.contains("<meta http-equiv=\"refresh\" content=\"5\">"))
            #expect(Self.svgCount(html) == 2)
            #expect(html.contains("href=\"\(Self.recordedURL)\""))
            #expect(html.contains("href=\"\(Self.matrixURL)\""))
            #expect(html.contains("data-run-id=\"\(Self.matrixRunID)\" data-attempt=\"1\" data-status=\"in_progress\""))
            #expect(html.contains("<section id=\"active\">"))
            #expect(html.contains("<table class=\"requests\">"))
            #expect(html.contains("<table class=\"deliveries\">"))
            #expect(html.contains("workflow_job.in_progress"))
            #expect(!html.contains("<script"), "no scripts needed")
            #expect(!html.contains("src=\""), "no external assets")

            try await admin.deliver(matrix.finishing, prefix: "matrix-end")
            #expect(try await admin.waitUntilAllEnded(), "the matrix run's card never ended")
            let finished = try await admin.get("/").text
            #expect(!finished.contains("http-equiv=\"refresh\""))
            #expect(Self.svgCount(finished) == 2)
            #expect(finished.contains("<section id=\"recent\">"))
            #expect(!finished.contains("<section id=\"active\">"))
            #expect(finished.contains(">Failed</span>"))
            #expect(finished.contains(">Succeeded</span>"))
            #expect(finished.contains("href=\"\(Self.matrixURL)\""))
        } catch {
            try? await admin.stop()
            throw error
        }
        try await admin.stop()
    }

    @Test("the list, the page's runs and its header say what each run cost and what the budget allows")
    func costShown() async throws {
        let now = Date().timeIntervalSince1970
        let reset = now + 10 * 86_400
        let usage = PushWardUsage(liveActivityUpdatesUsed: 1_200, liveActivityUpdatesLimit: 5_000, quotaResetsAt: reset)
        let admin = try await Admin.start(
            transport: StatusPageBrowserTests.AcknowledgingTransport(account: usage), fidelity: "auto")
        do {
            try await Self.replayRecorded(admin)
            #expect(try await admin.waitUntilAllEnded(), "the recorded run's card never ended")
            let (pushes, state) = try await admin.read { database in
                let key = try #require(try database.listRuns().first?.key)
                return (try database.requests(for: key), try #require(try database.storedRun(key)).state)
            }
            let acknowledged = pushes.filter { ($0.status ?? 0) / 100 == 2 }
            #expect(!acknowledged.isEmpty)
            #expect(state.updatesSpent == acknowledged.count)
            let decision = try #require(state.cardDecision, "the planner decided the run's level")

            let list = try await admin.get("/api/runs")
            let runs = try #require(try JSONValue(parsing: list.body).arrayValue)
            #expect(runs.first?["updates_spent"] == .number(Double(acknowledged.count)))

            let html = try await admin.get("/").text
            #expect(html.contains("<dt>Updates</dt><dd class=\"updates\">\(acknowledged.count)</dd>"))
            let level = decision.level?.rawValue ?? "no card"
            #expect(html.contains("<p class=\"decision\" data-level=\"\(level)\">"))
            #expect(html.contains(Markup.escaped(decision.reason)))
            // The header: PushWard's count (plus what was spent since it was read), the limit, the reset.
            let used = StatusPageBrowserTests.matches(
                "<span id=\"budget\" class=\"budget\">([0-9,]+) / 5,000 updates", in: html
            ).first.flatMap { Int($0.replacingOccurrences(of: ",", with: "")) }
            #expect(
                used.map { (1_200...1_200 + acknowledged.count).contains($0) } == true, "\(String(describing: used))")
            #expect(html.contains(" · resets \(GitHubTimestamp.format(reset).prefix(10)) · level "))
            // The chart: a bar per UTC day the pushes went out on (one, unless midnight passed).
            let days = Set(acknowledged.map { ($0.sentAt / 86_400).rounded(.down) })
            #expect(html.contains("<section id=\"month\">"))
            #expect(html.contains("class=\"budget-chart\" id=\"budget-chart\" data-bars=\"\(days.count)\""))
            #expect(html.components(separatedBy: "<rect class=\"bar\"").count - 1 == days.count)
            #expect(html.contains("class=\"limit-line\""))
            #expect(html.contains("class=\"level-change\" data-level=\"\(level)\""))
            let bars = StatusPageBrowserTests.matches("data-updates=\"([0-9]+)\"", in: html).compactMap { Int($0) }
            #expect(bars.reduce(0, +) == acknowledged.count)
        } catch {
            try? await admin.stop()
            throw error
        }
        try await admin.stop()
    }

    @Test("with an admin token, the page and the API require it like /metrics")
    func tokenRule() async throws {
        let admin = try await Admin.start(adminToken: "s3cret")
        do {
            try await Self.replayRecorded(admin)
            for target in ["/", "/api/runs", "/api/runs/\(Self.recordedRunID)", "/api/deliveries/x", "/metrics"] {
                let anonymous = try await admin.get(target)
                #expect(anonymous.status == 401, "\(target)")
                #expect(anonymous.json?["error"] == "unauthorized", "\(target)")
                #expect(anonymous.headers["www-authenticate"] == "Bearer", "\(target)")
                #expect(try await admin.get(target, token: "wrong").status == 401, "\(target)")
            }
            #expect(try await admin.get("/", token: "s3cret").status == 200)
            #expect(try await admin.get("/api/runs", token: "s3cret").status == 200)
            #expect(try await admin.get("/api/deliveries/x", token: "s3cret").status == 404)
            #expect(try await admin.get("/metrics", token: "s3cret").status == 200)
        } catch {
            try? await admin.stop()
            throw error
        }
        try await admin.stop()
    }

    @Test("the page escapes every text it shows and never links outside http(s)")
    func pageEscapes() {
        let content: JSONValue = [
            "template": "steps", "state": "<img src=x>", "current_step": 1, "total_steps": 1, "progress": 0.5,
            "url": "javascript:alert(1)",
        ]
        let run = StatusSnapshot.Run(
            listing: BridgeDatabase.RunListing(
                key: RunKey(repository: "evil/<b>repo</b>", runID: 1, attempt: 1), workflow: "CI \"&\" <i>",
                branch: "<branch>", runNumber: 3, status: "in_progress", conclusion: nil, slug: "gh-<x>",
                ownerPhase: .live, updatedAt: 100),
            runURL: "https://github.com/evil/repo/actions/runs/1",
            shown: StatusSnapshot.Card(content: content.objectValue!, isEnded: false), desired: nil,
            lastProblem: "422 <activity.content_invalid>", lastProblemAt: 90,
            requests: [
                RequestRecord(
                    slug: "gh-x", run: RunKey(repository: "r", runID: 1, attempt: 1), kind: "update", method: "PATCH",
                    path: "/activities/<x>", body: "{}", sentAt: 95, status: 422, outcome: "rejected",
                    detail: "<detail>")
            ],
            deliveries: [
                DeliveryRecord(
                    id: "id/<1>", hookID: nil, event: "workflow_job", action: "<queued>", receivedAt: 80,
                    repository: nil, runID: 1, runAttempt: 1, outcome: .ignored, reason: "<filtered>",
                    contentType: nil, payload: nil, payloadBytes: 0)
            ])
        var decided = run
        decided.updatesSpent = 17
        decided.cardDecision = CardDecision(
            level: nil, reason: "<spent> 250 of 250", decidedAt: 100, remaining: 0, forecastRuns: 3)
        let html = StatusPage.render(
            StatusSnapshot(runs: [decided], takenAt: 120),
            standing: (PushBudget(used: 250, limit: nil, resetsAt: nil), .milestones))
        #expect(html.contains("<dt>Updates</dt><dd class=\"updates\">17</dd>"))
        #expect(html.contains("data-level=\"no card\"><span class=\"tag bad\">no card</span>"))
        #expect(html.contains("&lt;spent&gt; 250 of 250"))
        #expect(html.contains(">250 / unlimited updates · level milestones</span>"))
        #expect(html.contains("data-bars=\"0\""))
        for raw in [
            "<img", "<b>", "<i>", "<branch>", "<x>", "<activity", "<detail>", "<queued>", "<filtered>", "<1>",
            "<spent>",
        ] {
            #expect(!html.contains(raw), "\(raw) is not escaped")
        }
        #expect(html.contains("evil/&lt;b&gt;repo&lt;/b&gt;"))
        #expect(html.contains("CI &quot;&amp;&quot; &lt;i&gt;"))
        #expect(html.contains("422 &lt;activity.content_invalid&gt;"))
        #expect(!html.contains("javascript:"))
        #expect(html.contains("href=\"/api/deliveries/id%2F%3C1%3E\""))
        #expect(html.contains("<meta http-equiv=\"refresh\" content=\"5\">"))

        let empty = StatusPage.render(StatusSnapshot(runs: [], takenAt: 0))
        #expect(empty.contains("No runs yet"))
        #expect(!empty.contains("id=\"budget\""), "no standing given, no budget drawn")
        let unread = StatusPage.render(StatusSnapshot(runs: [], takenAt: 0), standing: (nil, nil))
        #expect(unread.contains(">budget not read · level not chosen yet</span>"))
        #expect(unread.contains("<section id=\"month\">"), "the chart still shows what the bridge sent")
        #expect(!empty.contains("http-equiv=\"refresh\""))
    }

    @Test("the desired card is drawn beside the acknowledged one only when it would look different")
    func desiredWhenDifferent() {
        let acknowledged: [String: JSONValue] = [
            "template": "steps", "state": "Build", "current_step": 1, "total_steps": 2, "progress": 0.5,
            "live_progress": true, "start_date": 100, "end_date": 200,
        ]
        var sameButWindow = acknowledged
        sameButWindow["live_progress"] = nil
        sameButWindow["start_date"] = nil
        sameButWindow["end_date"] = nil
        var moved = sameButWindow
        moved["current_step"] = 2
        moved["state"] = "Test"
        func page(desired: [String: JSONValue]) -> String {
            let run = StatusSnapshot.Run(
                listing: BridgeDatabase.RunListing(
                    key: RunKey(repository: "acme/widgets", runID: 5, attempt: 1), workflow: "CI", branch: "main",
                    runNumber: 1, status: "in_progress", conclusion: nil, slug: "gh-1", ownerPhase: .live,
                    updatedAt: 100),
                runURL: "https://github.com/acme/widgets/actions/runs/5",
                shown: StatusSnapshot.Card(content: acknowledged, isEnded: false),
                desired: StatusSnapshot.Card(content: desired, isEnded: false), lastProblem: nil, lastProblemAt: nil,
                requests: [], deliveries: [])
            return StatusPage.render(StatusSnapshot(runs: [run], takenAt: 150))
        }
        let same = page(desired: sameButWindow)
        #expect(Self.svgCount(same) == 1)
        #expect(Self.svgCount(same, role: "desired") == 0)
        #expect(same.contains("class=\"eta\""), "the acknowledged window counts down")
        let different = page(desired: moved)
        #expect(Self.svgCount(different) == 1)
        #expect(Self.svgCount(different, role: "desired") == 1)
        #expect(different.contains("Desired, not acknowledged yet"))
        #expect(different.contains(">Test</text>"))
        #expect(different.contains("href=\"https://github.com/acme/widgets/actions/runs/5\""))
    }
}
