import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// Home-screen widgets in the core: the `widgets` section, which run a widget follows, what it
/// shows (checked against the fake's reading of the `progress` template), and the few updates the
/// reconciler spends on it.
@Suite("widgets")
struct WidgetTests {
    static let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (mac)", duration: 90)],
        [RunScript.Job("deploy", duration: 30)],
    ]
    static let main = WidgetSettings(
        slug: "ci-main", name: "CI on main", workflows: [GlobPattern("CI")], branches: [GlobPattern("main")])

    static func engine(_ widgets: [WidgetSettings] = [main]) -> BridgeEngine {
        BridgeEngine(configuration: EngineConfiguration(widgets: widgets))
    }

    /// Plays `events`, one second apart from the first's time, acknowledging every widget request
    /// at once; returns the requests sent.
    @discardableResult
    static func play(
        _ events: [WebhookEvent], on engine: inout BridgeEngine, history: inout RunHistory, from start: UnixTime
    )
        -> [PlannedWidgetRequest]
    {
        var sent: [PlannedWidgetRequest] = []
        var now = start
        for event in events {
            now += 1
            _ = engine.receive(event, at: now, history: history)
            engine.advance(to: now)
            for planned in engine.dueWidgetRequests(at: now, inFlight: []) {
                sent.append(planned)
                _ = engine.handleWidget(.success(status: 200), for: planned, at: now)
            }
            for summary in engine.takeChanges().history.values { history.record(summary) }
        }
        return sent
    }

    // MARK: Configuration

    @Test("the section: slug and name required, globs, stale_after a day by default")
    func configuration() throws {
        let configuration = try BridgeConfiguration(
            json: Data(
                #"""
                {"widgets": [{"slug": "ci-main", "name": "CI on main", "repositories": ["acme/*"], "workflows": ["CI"],
                              "branches": ["main"], "stale_after": "2h"},
                             {"slug": "all_ci-2", "name": "Everything"}]}
                """#.utf8))
        #expect(configuration.widgets.map(\.slug) == ["ci-main", "all_ci-2"])
        #expect(configuration.widgets[0].staleAfter == 7_200)
        #expect(configuration.widgets[0].branches.map(\.pattern) == ["main"])
        #expect(configuration.widgets[1].staleAfter == 86_400)
        #expect(configuration.widgets[1].repositories.isEmpty)
    }

    @Test(
        "each mistake is an error naming its key",
        arguments: [
            (#"[{"name": "x"}]"#, "widgets[0].slug"), (#"[{"slug": "-x", "name": "x"}]"#, "widgets[0].slug"),
            (#"[{"slug": "a b", "name": "x"}]"#, "widgets[0].slug"),
            (#"[{"slug": "é", "name": "x"}]"#, "widgets[0].slug"),
            (#"[{"slug": "a"}]"#, "widgets[0].name"), (#"[{"slug": "a", "name": ""}]"#, "widgets[0].name"),
            (#"[{"slug": "a", "name": "x", "stale_after": "30s"}]"#, "widgets[0].stale_after"),
            (#"[{"slug": "a", "name": "x", "stale_after": "8d"}]"#, "widgets[0].stale_after"),
            (#"[{"slug": "a", "name": "x", "events": ["push"]}]"#, "widgets[0].events"),
            (#"[{"slug": "a", "name": "x"}, {"slug": "a", "name": "y"}]"#, "widgets[1].slug"),
            (#"{"slug": "a"}"#, "widgets"),
        ])
    func mistakes(json: String, key: String) {
        let error: ConfigurationError? = {
            do throws(ConfigurationError) {
                _ = try BridgeConfiguration(json: Data(#"{"widgets": \#(json)}"#.utf8))
                return nil
            } catch { return error }
        }()
        #expect(error?.key == key, "\(json): \(String(describing: error))")
    }

    // MARK: What it shows

    @Test("a run's start (a window from history), its end (value 1, the result), each valid for PushWard")
    func content() throws {
        var engine = Self.engine()
        var history = RunHistory()
        let first = RunScript(runID: 1, start: 1_800_000_000)
        Self.play(first.deliveries(waves: Self.waves), on: &engine, history: &history, from: 1_800_000_000)
        let ended = try #require(engine.widgets["ci-main"]?.desired)
        #expect(ended["value"] == 1)
        #expect(ended["subtitle"] == "main · Succeeded")
        #expect(ended["label"] == "CI")
        #expect(ended["stat_rows"]?.arrayValue?.last == ["label": "Repository", "value": "acme/widgets"])
        #expect(ended["start_date"] == nil)
        #expect(WidgetContract.contentViolations(ended, at: 1_800_000_000).isEmpty)

        let second = RunScript(runID: 2, start: 1_800_003_600, firstJobID: 2_000)
        Self.play(
            Array(second.deliveries(waves: Self.waves).prefix(4)), on: &engine, history: &history, from: 1_800_003_600)
        let live = try #require(engine.widgets["ci-main"]?.desired)
        #expect(engine.widgets["ci-main"]?.run?.runID == 2)
        #expect(live["value"]?.doubleValue.map { $0 < 1 } == true)
        let start = try #require(live["start_date"]?.stringValue.flatMap(GitHubTimestamp.parse))
        let end = try #require(live["end_date"]?.stringValue.flatMap(GitHubTimestamp.parse))
        #expect(end - start == 140, "history's 20 + 90 + 30 s")
        #expect(WidgetContract.contentViolations(live, at: 1_800_003_600).isEmpty)
    }

    @Test("hostile names: controls and bidi overrides gone, every field within the template's limits")
    func hostileNames() throws {
        var engine = Self.engine([WidgetSettings(slug: "all", name: "All")])
        var history = RunHistory()
        var script = RunScript(
            runID: 3, workflow: "CI\u{202E}gnp.exe" + String(repeating: "👩‍👩‍👧‍👦", count: 300), branch: "main\n\u{2066}x",
            start: 1_800_000_000)
        script.repository = Repository(fullName: "evil/<script>", htmlURL: "https://github.com/evil/x")
        let waves = [[RunScript.Job("job\u{200F}\u{1B}[31m", duration: 5, conclusion: "failure")]]
        Self.play(script.deliveries(waves: waves), on: &engine, history: &history, from: 1_800_000_000)
        let content = try #require(engine.widgets["all"]?.desired)
        #expect(WidgetContract.contentViolations(content, at: 1_800_000_000).isEmpty)
        let text = (content["label"]?.stringValue ?? "") + (content["subtitle"]?.stringValue ?? "")
        #expect((content["label"]?.stringValue ?? "").unicodeScalars.count <= 256)
        for forbidden: Unicode.Scalar in ["\u{202E}", "\u{2066}", "\u{200F}", "\u{1B}", "\n"] {
            #expect(!text.unicodeScalars.contains(forbidden), "U+\(String(forbidden.value, radix: 16))")
        }
        #expect(content["accent_color"] == "red")
        #expect(content["stat_rows"]?.arrayValue?.contains { $0["label"] == "Failed" && $0["value"] == "1" } == true)
    }

    @Test("the fake holds widgets to the progress template: 422 for what PushWard refuses")
    func contract() {
        let valid: [String: JSONValue] = [
            "template": "progress", "value": 0.6, "label": "Pages", "subtitle": "6 of 10", "icon": "checklist",
            "accent_color": "green",
            "stat_rows": [["label": "Acked", "value": "6"], ["label": "Total", "value": "10"]],
            "start_date": "2027-05-10T22:00:00Z", "end_date": "2027-05-11T00:00:00Z",
        ]
        let now: UnixTime = 1_800_000_000
        #expect(WidgetContract.contentViolations(valid, at: now).isEmpty)
        var dated = valid
        dated["value"] = nil
        #expect(WidgetContract.contentViolations(dated, at: now).isEmpty, "both dates make value optional")
        func with(_ key: String, _ value: JSONValue?) -> [String: JSONValue] {
            var content = valid
            content[key] = value
            return content
        }
        let breaches: [([String: JSONValue], String)] = [
            (with("value", 1.2), "value"), (with("value", -0.1), "value"), (with("value", "0.5"), "value"),
            (with("start_date", "2027-05-11T01:00:00Z"), "end_date"), (with("end_date", nil), "end_date"),
            (with("end_date", "1999-12-31T00:00:00Z"), "end_date"), (with("end_date", 1_800_000_000), "end_date"),
            (with("start_date", "2029-01-01T00:00:00Z"), "start_date"), (with("template", "steps"), "template"),
            (with("stat_rows", .array(Array(repeating: ["label": "a", "value": "b"], count: 7))), "stat_rows"),
            (
                with("stat_rows", [["label": .string(String(repeating: "x", count: 33)), "value": "1"]]),
                "stat_rows[0].label"
            ),
            (with("stat_rows", [["label": "a"]]), "stat_rows[0].value"), (with("trend", "sideways"), "trend"),
            (with("label", .string(String(repeating: "x", count: 257))), "label"), (with("progress", 0.5), "progress"),
            (with("accent_color", "chartreuse"), "accent_color"),
            (with("tap_action", ["url": "javascript:x"]), "tap_action.url"),
        ]
        for (content, field) in breaches {
            let violations = WidgetContract.contentViolations(content, at: now)
            #expect(violations.contains { $0.field == field }, "\(field): \(violations)")
        }
        #expect(!WidgetContract.postViolations(["slug": "-x", "name": "n", "content": .object(valid)]).isEmpty)
        #expect(
            !WidgetContract.postViolations(["slug": "x", "name": "n", "content": .object(valid), "stale_after": 30])
                .isEmpty)
        #expect(
            WidgetContract.postViolations(["slug": "x", "name": "n", "content": .object(valid), "stale_after": 60])
                .isEmpty)
        #expect(
            WidgetContract.patchViolations(["content": ["template": "progress", "value": 2]], stored: valid).map(
                \.field)
                == ["content.value"])
        #expect(
            WidgetContract.patchViolations(["content": ["value": 0.7]], stored: valid).map(\.field)
                == ["content.template"], "a patch repeats the template")
        #expect(WidgetContract.patchViolations(["value": 0.5], stored: valid).contains { $0.field == "value" })
    }

    // MARK: What it spends

    @Test("a run costs its start and its end; progress alone sends nothing; an older run never takes the widget")
    func spending() throws {
        var engine = Self.engine()
        var history = RunHistory()
        let first = RunScript(runID: 1, start: 1_800_000_000)
        let sent = Self.play(first.deliveries(waves: Self.waves), on: &engine, history: &history, from: 1_800_000_000)
        #expect(sent.map(\.kind) == [.create, .end], "the create carries the start")
        #expect(sent.first?.request.method == .post && sent.first?.request.path == "/widgets")
        #expect(sent.first?.request.body["stale_after"] == 86_400)
        #expect(sent.last?.request.path == "/widgets/ci-main")
        #expect(engine.dueWidgetRequests(at: 1_800_001_000, inFlight: []).isEmpty, "an ended run's result stays")

        // A newer run starts; then a late delivery of the older one arrives: the widget stays on the newer.
        let second = RunScript(runID: 2, start: 1_800_003_600, firstJobID: 2_000)
        let started = Self.play(
            Array(second.deliveries(waves: Self.waves).prefix(3)), on: &engine, history: &history, from: 1_800_003_600)
        #expect(started.map(\.kind) == [.start])
        let window = try #require(started.first?.request.body["content"]?["end_date"])
        #expect(window.stringValue != nil, "the start carries the window")
        Self.play(
            [first.run("completed", at: 200, conclusion: "success")], on: &engine, history: &history,
            from: 1_800_003_700)
        #expect(engine.widgets["ci-main"]?.run?.runID == 2)
        let rest = Self.play(
            Array(second.deliveries(waves: Self.waves).dropFirst(3)), on: &engine, history: &history,
            from: 1_800_003_610)
        #expect(rest.filter { $0.kind == .end }.count == 1)
        #expect(rest.filter { $0.kind == .estimate }.count <= 1)
        #expect(engine.widgets["ci-main"]?.updatesSpent == 4 + rest.filter { $0.kind == .estimate }.count)
    }

    @Test("an estimate moves the widget only past the threshold, and only while more than half the month is left")
    func estimates() {
        #expect(WidgetReconciler.estimateThreshold(remaining: 60) == 60)
        #expect(WidgetReconciler.estimateThreshold(remaining: 1_200) == 300)
        #expect(!WidgetReconciler.moved(from: 1_000, to: 1_050, now: 900))
        #expect(WidgetReconciler.moved(from: 1_000, to: 1_100, now: 900))
        #expect(WidgetReconciler.moved(from: nil, to: 1_100, now: 900))
        #expect(!WidgetReconciler.moved(from: nil, to: nil, now: 900))
        #expect(WidgetBudget(used: 20, limit: 50).allowsEstimates(at: 0))
        #expect(!WidgetBudget(used: 25, limit: 50).allowsEstimates(at: 0))
        #expect(WidgetBudget(used: 49, limit: 50).allowsAny(at: 0))
        #expect(!WidgetBudget(used: 50, limit: 50).allowsAny(at: 0))
        #expect(WidgetBudget().allowsEstimates(at: 0), "unlimited")
        #expect(!WidgetBudget(pausedUntil: 100).allowsAny(at: 99))
        #expect(WidgetBudget(pausedUntil: 100).allowsAny(at: 100))

        var session = WidgetSession(slug: "w")
        let run = RunKey(repository: "a/b", runID: 1, attempt: 1)
        session.run = run
        session.desired = ["template": "progress", "value": 0.5, "end_date": "2027-01-01T00:10:00Z"]
        session.shown = WidgetSession.Shown(
            run: run, final: false,
            content: ["template": "progress", "value": 0.1, "end_date": "2027-01-01T00:00:00Z"])
        let now: UnixTime = 1_798_760_000
        guard case .send(let planned) = WidgetReconciler.decide(session, settings: Self.main, estimates: true, now: now)
        else {
            Issue.record("a ten-minute move is worth an update")
            return
        }
        #expect(planned.kind == .estimate)
        #expect(
            planned.request.body == [
                "content": ["template": "progress", "value": 0.5, "end_date": "2027-01-01T00:10:00Z"]
            ],
            "only what changed, and the template, which the schema requires in every PATCH")
        #expect(WidgetReconciler.decide(session, settings: Self.main, estimates: false, now: now) == .idle)
    }

    @Test("answers: a 404 creates it again, a refusal is not sent again, a failure backs off, a spent quota pauses")
    func answers() throws {
        var engine = Self.engine()
        var history = RunHistory()
        let script = RunScript(runID: 1, start: 1_800_000_000)
        let events = script.deliveries(waves: Self.waves)
        _ = engine.receive(events[0], at: 1_800_000_001, history: history)
        let create = try #require(engine.dueWidgetRequests(at: 1_800_000_001, inFlight: []).first)
        #expect(engine.dueWidgetRequests(at: 1_800_000_001, inFlight: ["ci-main"]).isEmpty, "one at a time")
        let effect = engine.handleWidget(.noAnswer(reason: "reset"), for: create, at: 1_800_000_001)
        #expect(effect == .willRetry(at: 1_800_000_011))
        #expect(engine.dueWidgetRequests(at: 1_800_000_005, inFlight: []).isEmpty)
        let again = try #require(engine.dueWidgetRequests(at: 1_800_000_011, inFlight: []).first)
        #expect(again.kind == .create)
        _ = engine.handleWidget(.success(status: 201), for: again, at: 1_800_000_011)
        Self.play(Array(events.dropFirst()), on: &engine, history: &history, from: 1_800_000_100)
        let deleted = PlannedWidgetRequest(
            request: PushWardRequest(
                method: .patch, slug: "ci-main", body: ["content": ["value": 1]], resource: .widgets),
            kind: .end, run: RunKey(repository: "acme/widgets", runID: 1, attempt: 1), final: true,
            content: [:])
        #expect(
            engine.handleWidget(
                .problem(PushWardProblem(status: 404, code: "widget.not_found")), for: deleted, at: 1_800_001_000)
                == .recreating)
        #expect(engine.dueWidgetRequests(at: 1_800_001_000, inFlight: []).first?.kind == .create)
        let refused = try #require(engine.dueWidgetRequests(at: 1_800_001_000, inFlight: []).first)
        #expect(
            engine.handleWidget(
                .problem(PushWardProblem(status: 422, code: "widget.content_invalid")), for: refused, at: 1_800_001_001)
                == .rejected("422 widget.content_invalid"))
        #expect(engine.dueWidgetRequests(at: 1_800_001_002, inFlight: []).isEmpty, "the same body never again")
        let spent = PushWardProblem(
            status: 429, code: "quota.exceeded", resetAt: 1_801_000_000, quotaKind: "widget_updates")
        #expect(
            engine.handleWidget(.problem(spent), for: refused, at: 1_800_001_003)
                == .quotaExhausted(until: 1_801_000_000))
        #expect(!engine.widgetBudget.allowsAny(at: 1_800_999_999))
    }
}
