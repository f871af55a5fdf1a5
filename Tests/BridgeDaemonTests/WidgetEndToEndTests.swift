import BridgeCore
import BridgeDaemon
import BridgeStore
import BridgeTestSupport
import Foundation
import Testing

/// Home-screen widgets through the whole daemon over HTTP, against the fake PushWard (which
/// validates `POST /widgets` and `PATCH /widgets/{slug}` with the `progress` template: a value out
/// of range, dates out of order, more than 6 stat rows → 422, and counts every widget update).
@Suite("Widgets end to end", .serialized, .timeLimit(.minutes(2)))
struct WidgetEndToEndTests {
    typealias Bridge = DispatchEndToEndTests.Bridge
    static let widgets = #"""
        "widgets": [{"slug": "ci-main", "name": "CI on main", "repositories": ["acme/*"], "workflows": ["CI"],
                     "branches": ["main"], "stale_after": "2h"}],
        "activity": {"completion_grace": "1h"},
        """#
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (mac)", duration: 90)],
        [RunScript.Job("deploy", duration: 30)],
    ]

    static func widgetRequests(_ fake: FakePushWardServer) -> [FakePushWardServer.Received] {
        fake.requests.filter { $0.path.hasPrefix("/widgets") }
    }

    @Test("a widget follows the latest run on main: created once, updated at the start with dates and at the end")
    func followsRuns() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake, topLevel: Self.widgets)
        let now = Date().timeIntervalSince1970
        let first = RunScript(runID: 1, runNumber: 1, start: now - 3_600, firstJobID: 100)
        for event in first.deliveries(waves: Self.waves) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await fake.until { fake.widgets["ci-main"]?.content["value"] == 1 })
        let ended = try #require(fake.widgets["ci-main"])
        #expect(ended.name == "CI on main")
        #expect(ended.staleAfter == 7_200)
        #expect(ended.content["template"] == "progress")
        #expect(ended.content["subtitle"] == "main · Succeeded")
        #expect(ended.content["start_date"] == nil && ended.content["end_date"] == nil)
        let rows = ended.content["stat_rows"]?.arrayValue ?? []
        #expect(rows.first == ["label": "Jobs", "value": "4/4"])
        #expect(rows.contains { $0["label"] == "Duration" && $0["unit"] != nil })
        let afterFirst = Self.widgetRequests(fake).count
        #expect(afterFirst <= 3, "create, start, end: \(Self.widgetRequests(fake).map(\.path))")

        // A run on another branch changes nothing.
        var other = RunScript(runID: 2, runNumber: 2, start: now - 1_800, firstJobID: 200)
        other.branch = "feature/x"
        for event in other.deliveries(waves: Self.waves) { #expect(try await bridge.deliver(event) == 202) }

        // The next run on main starts: the widget shows it with a window from history.
        let second = RunScript(runID: 3, runNumber: 3, start: now - 5, firstJobID: 300)
        let events = second.deliveries(waves: Self.waves)
        for event in events.prefix(4) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await fake.until { fake.widgets["ci-main"]?.content["end_date"] != nil })
        let live = try #require(fake.widgets["ci-main"])
        #expect(live.content["value"]?.doubleValue.map { $0 < 1 } == true, "value is sent with the dates")
        let start = try #require(live.content["start_date"]?.stringValue.flatMap(GitHubTimestamp.parse))
        let end = try #require(live.content["end_date"]?.stringValue.flatMap(GitHubTimestamp.parse))
        #expect((120...160).contains(end - start), "history's 20 + 90 + 30 s: \(end - start)")
        #expect(live.content["subtitle"]?.stringValue?.hasPrefix("main · ") == true)

        for event in events.dropFirst(4) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await fake.until { fake.widgets["ci-main"]?.content["value"] == 1 })
        // The status page draws the widget as PushWard holds it, once the bridge has stored
        // PushWard's answer (no event of its own: asked until it does, within the time limit).
        var page = ""
        #expect(
            await untilTrue {
                page = (try? await AlertEndToEndTests.get("/", port: bridge.daemon.adminPort)) ?? ""
                return page.contains("data-value=\"100\"")
            })
        #expect(page.contains("data-widget=\"ci-main\""))
        #expect(page.contains("data-value=\"100\""))
        #expect(page.contains("main · Succeeded"))
        // The cards went on as ever: each run's card ends too (the widget's end may reach PushWard
        // before the card's; waited for as the fake's event before the daemon stops).
        #expect(await fake.until { fake.activities.values.allSatisfy { $0.state == "ended" } })
        await bridge.daemon.shutdown()
        let requests = Self.widgetRequests(fake)
        #expect(requests.filter { $0.method == "POST" }.count == 1, "created once")
        #expect(requests.count <= afterFirst + 3, "a run costs its start, at most one estimate, and its end")
        #expect(requests.allSatisfy { (200..<300).contains($0.status) })
        #expect(
            requests.filter { $0.method == "PATCH" }.allSatisfy {
                $0.headers.contains { $0.0.lowercased() == "content-type" && $0.1 == "application/merge-patch+json" }
            })
        #expect(fake.widgets["ci-main"]?.updates == requests.count)
        #expect(fake.violations.isEmpty, "\(fake.violations)")
    }

    @Test("the recorded attempt 10 on a widget that follows everything: the jobs wait for the run, then its result")
    func recordedRun() async throws {
        let fake = try FakePushWardServer()
        let bridge = try Bridge(fake: fake, topLevel: #""widgets": [{"slug": "all-ci", "name": "All CI"}],"#)
        let events = try DaemonEndToEndTests.attempt10Events()
        // The recording's jobs come before its only workflow_run delivery: until that says the
        // run is the repository's own (not a fork's), no widget follows it.
        for event in events.dropLast() { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { fake.activities.values.contains { $0.state == "ongoing" } })
        #expect(fake.widgets["all-ci"] == nil)
        #expect(try await bridge.deliver(try #require(events.last)) == 202)
        #expect(await DispatchEndToEndTests.eventually { fake.widgets["all-ci"]?.content["value"] == 1 })
        let ended = try #require(fake.widgets["all-ci"])
        #expect(ended.staleAfter == 86_400)
        #expect(ended.content["subtitle"]?.stringValue?.contains("·") == true)
        #expect(ended.updates == 1, "created with the result")
        #expect(fake.violations.isEmpty, "\(fake.violations)")
        await bridge.daemon.shutdown()
    }

    /// A daemon on `database` with the `ci-main` widget, delivering to `fake`.
    static func daemon(database: String, fake: FakePushWardServer) throws -> Daemon {
        let json = """
            {\(widgets) "listen": "127.0.0.1:0", "admin_listen": "127.0.0.1:0", "database": "\(database)",
             "github": {"webhook_secrets": ["\(DispatchEndToEndTests.secret)"]},
             "pushward": {"url": "\(fake.baseURL)", "api_key": "\(fake.apiKey)", "end_delay": "0s",
                          "end_display_time": "0s", "min_update_interval": "0s",
                          \(DispatchEndToEndTests.Bridge.everyChange)}}
            """
        return try Daemon.start(
            configuration: try BridgeConfiguration(json: Data(json.utf8)), logger: Logger(label: "test", sink: { _ in })
        )
    }

    @Test("a restart mid-run keeps the widget: no second create, the run's end still arrives")
    func restart() async throws {
        let directory = try ScratchDirectory()
        let database = directory.path("bridge.sqlite")
        let fake = try FakePushWardServer()
        let script = RunScript(runID: 6, runNumber: 6, start: Date().timeIntervalSince1970 - 900, firstJobID: 600)
        let events = script.deliveries(waves: Self.waves)
        var daemon = try Self.daemon(database: database, fake: fake)
        for event in events.prefix(4) {
            #expect(try await DispatchEndToEndTests.deliver(event, port: daemon.port) == 202)
        }
        #expect(await DispatchEndToEndTests.eventually { fake.widgets["ci-main"] != nil })
        try await Task.sleep(for: .milliseconds(200))
        await daemon.shutdown()
        daemon = try Self.daemon(database: database, fake: fake)
        for event in events.dropFirst(4) {
            #expect(try await DispatchEndToEndTests.deliver(event, port: daemon.port) == 202)
        }
        #expect(await DispatchEndToEndTests.eventually { fake.widgets["ci-main"]?.content["value"] == 1 })
        try await Task.sleep(for: .milliseconds(300))
        await daemon.shutdown()
        let requests = Self.widgetRequests(fake)
        #expect(requests.filter { $0.method == "POST" }.count == 1, "the restart remembered the widget")
        #expect(requests.count == 2, "the create with the start, the end: \(requests.map(\.path))")
        #expect(fake.violations.isEmpty, "\(fake.violations)")
    }

    @Test("widget updates spent (429 quota.exceeded): widgets wait for the reset, said once; cards go on")
    func quota() async throws {
        let fake = try FakePushWardServer()
        fake.setFault { _, path, _ in
            path.hasPrefix("/widgets")
                ? .status(
                    429, code: "quota.exceeded", detail: "quota exceeded for widget_updates", resetAt: 4_102_444_800)
                : nil
        }
        let bridge = try Bridge(fake: fake, topLevel: Self.widgets)
        let run = RunScript(runID: 4, runNumber: 4, start: Date().timeIntervalSince1970 - 900, firstJobID: 400)
        for event in run.deliveries(waves: Self.waves) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { DispatchEndToEndTests.finalCard(fake)?.state == "ended" })
        try await Task.sleep(for: .milliseconds(300))
        await bridge.daemon.shutdown()
        #expect(Self.widgetRequests(fake).count == 1, "one refused request, then a pause until the reset")
        #expect(fake.widgets.isEmpty)
        #expect(bridge.logs.all.filter { $0.contains("widget updates are spent") }.count == 1)
        let stored = try BridgeDatabase(path: bridge.databasePath, readOnly: true).widgets()
        #expect(stored.first?.lastProblem?.contains("quota.exceeded") == true)
        #expect(stored.first?.desiredFinal == true, "the widget still knows the run's result, for after the reset")
    }

    @Test("the month's widget updates read as spent from /auth/me: no widget request is sent")
    func spentFromUsage() async throws {
        let fake = try FakePushWardServer()
        fake.setWidgetQuota(limit: 50, used: 50)
        let bridge = try Bridge(fake: fake, topLevel: Self.widgets)
        #expect(await DispatchEndToEndTests.eventually { fake.requests.contains { $0.path == "/auth/me" } })
        try await Task.sleep(for: .milliseconds(200))
        let run = RunScript(runID: 5, runNumber: 5, start: Date().timeIntervalSince1970 - 900, firstJobID: 500)
        for event in run.deliveries(waves: Self.waves) { #expect(try await bridge.deliver(event) == 202) }
        #expect(await DispatchEndToEndTests.eventually { DispatchEndToEndTests.finalCard(fake)?.state == "ended" })
        try await Task.sleep(for: .milliseconds(300))
        await bridge.daemon.shutdown()
        #expect(Self.widgetRequests(fake).isEmpty)
    }
}
