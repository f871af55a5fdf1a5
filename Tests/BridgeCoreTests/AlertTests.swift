import BridgeCore
import BridgeTestSupport
import Foundation
import Testing

/// Failure, fix and approval alerts in the core: which runs alert (rules), what the notification
/// says (content, clamped and made plain), and what follows each answer (`AlertRetry`).
@Suite("alerts")
struct AlertTests {
    static let failing: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 10)], [RunScript.Job("test (linux)", duration: 30, conclusion: "failure")],
    ]
    static let passing: [[RunScript.Job]] = [[RunScript.Job("lint", duration: 10)], [RunScript.Job("test (linux)")]]

    /// An engine with `rules` (default: what `"alerts": {}` turns on) that acknowledges every
    /// request at once, so runs own live activities as they would in the daemon.
    static func engine(
        _ rules: [AlertRule] = [.onDefaultBranch], actions: ActionSettings? = nil,
        routing: RoutingSettings = RoutingSettings(), widgets: [WidgetSettings] = []
    ) -> BridgeEngine {
        var settings = ActivitySettings()
        settings.endDelay = 0
        settings.endDisplayTime = 0
        settings.minUpdateInterval = 0
        return BridgeEngine(
            configuration: EngineConfiguration(
                settings: settings, alerts: AlertSettings(rules: rules), actions: actions, routing: routing,
                widgets: widgets))
    }

    /// Plays `events` (acknowledging every request) and returns the alerts planned, taking them
    /// out; the finished runs go into `history`, as the store would keep them.
    static func play(_ events: [WebhookEvent], on engine: inout BridgeEngine, history: inout RunHistory)
        -> [PlannedAlert]
    {
        var now: UnixTime = events.first.map(Self.time) ?? 1_700_000_000
        var alerts: [PlannedAlert] = []
        for event in events {
            now += 1
            _ = engine.receive(event, at: now, history: history)
            for slug in engine.sessions.keys.sorted() {
                if case .send(let planned) = engine.decide(slug: slug, at: now) { engine.acknowledge(planned, at: now) }
            }
            let changes = engine.takeChanges()
            for summary in changes.history.values { history.record(summary) }
            alerts += changes.alerts
        }
        return alerts
    }

    static func play(_ events: [WebhookEvent], on engine: inout BridgeEngine) -> [PlannedAlert] {
        var history = RunHistory()
        return play(events, on: &engine, history: &history)
    }

    static func time(_ event: WebhookEvent) -> UnixTime {
        if case .workflowRun(let delivery) = event { return delivery.run.createdAt ?? 1_700_000_000 }
        return 1_700_000_000
    }

    @Test("a failed run on the default branch alerts once, naming the failed step group, step, branch, commit, actor")
    func failureContent() throws {
        var engine = Self.engine()
        let script = RunScript(runID: 1)
        let alerts = Self.play(script.deliveries(waves: Self.failing), on: &engine)
        let alert = try #require(alerts.first)
        #expect(alerts.count == 1)
        #expect(alert.reason == .failure)
        #expect(alert.run == RunKey(repository: "acme/widgets", runID: 1, attempt: 1))
        #expect(alert.body["title"] == "acme/widgets · CI failed")
        #expect(alert.body["body"] == "test failed at “Run”\non main\nFix the build\nby octocat")
        #expect(alert.body["level"] == "active")
        let slug = ActivityIdentity.forRun(repository: script.repository, workflow: "CI", scope: .repository).slug
        #expect(alert.activitySlug == slug, "the run's card, named when sent if PushWard has it by then")
        #expect(alert.body["activity_slug"] == nil)
        #expect(alert.body["thread_id"] == .string(AlertContent.threadID(repository: "acme/widgets", workflow: "CI")))
        #expect(
            alert.body["collapse_id"]
                == .string(AlertContent.collapseID(repository: "acme/widgets", workflow: "CI", branch: "main")))
        #expect(NotificationContract.violations(alert.body).isEmpty)

        // The completed delivery again (a redelivery, or GitHub's repeat): nothing more planned.
        #expect(Self.play([script.run("completed", at: 200, conclusion: "failure")], on: &engine).isEmpty)
    }

    @Test("the alert's link is the failed job's log")
    func failureLinksTheJobLog() throws {
        var engine = Self.engine()
        var events = RunScript(runID: 2).deliveries(waves: Self.failing)
        for index in events.indices {
            guard case .workflowJob(var delivery) = events[index] else { continue }
            delivery.job.htmlURL = "https://github.com/acme/widgets/actions/runs/2/job/\(delivery.job.id)"
            events[index] = .workflowJob(delivery)
        }
        let alert = try #require(Self.play(events, on: &engine).first)
        #expect(alert.body["url"] == "https://github.com/acme/widgets/actions/runs/2/job/50001")
    }

    @Test("cancelled, successful and feature-branch runs do not alert under the default rule")
    func quietRuns() {
        var engine = Self.engine()
        #expect(
            Self.play(RunScript(runID: 3).deliveries(waves: Self.failing, conclusion: "cancelled"), on: &engine).isEmpty
        )
        #expect(Self.play(RunScript(runID: 4).deliveries(waves: Self.passing), on: &engine).isEmpty)
        #expect(
            Self.play(RunScript(runID: 5, branch: "feature/x").deliveries(waves: Self.failing), on: &engine).isEmpty)
    }

    @Test("the first success after a failure on the same branch is 'fixed'; cancelled runs between are looked past")
    func fixed() throws {
        var engine = Self.engine()
        var history = RunHistory()
        func play(_ script: RunScript, _ waves: [[RunScript.Job]], conclusion: String? = nil) -> [PlannedAlert] {
            Self.play(script.deliveries(waves: waves, conclusion: conclusion), on: &engine, history: &history)
        }
        let first = RunScript(runID: 10, start: 1_700_000_000)
        #expect(play(first, Self.failing).map(\.reason) == [.failure])
        let cancelled = RunScript(runID: 11, start: 1_700_000_500)
        #expect(play(cancelled, Self.failing, conclusion: "cancelled").isEmpty)
        let elsewhere = RunScript(runID: 12, branch: "other", start: 1_700_001_000)
        #expect(play(elsewhere, Self.passing).isEmpty, "a success on another branch fixes nothing here")
        let fix = RunScript(runID: 13, start: 1_700_001_500)
        let alerts = play(fix, Self.passing)
        let alert = try #require(alerts.first)
        #expect(alerts.map(\.reason) == [.fixed])
        #expect(alert.body["title"] == "acme/widgets · CI fixed")
        #expect(
            alert.body["collapse_id"]
                == .string(AlertContent.collapseID(repository: "acme/widgets", workflow: "CI", branch: "main")),
            "replaces the failure alert it answers")
        let again = RunScript(runID: 14, start: 1_700_002_000)
        #expect(play(again, Self.passing).isEmpty, "a second success fixes nothing")
    }

    @Test("a job waiting for an approval alerts 'waiting' once when a rule asks for it")
    func waiting() throws {
        var engine = Self.engine([AlertRule(when: [.waiting], level: .timeSensitive)])
        let script = RunScript(runID: 20)
        var events = [script.run("requested", at: 0), script.job(1, "deploy", "queued", createdAt: 1)]
        events.append(script.job(1, "deploy", "waiting", createdAt: 1, environment: "production"))
        events.append(script.job(1, "deploy", "waiting", createdAt: 1, environment: "production"))
        let alerts = Self.play(events, on: &engine)
        let alert = try #require(alerts.first)
        #expect(alerts.count == 1)
        #expect(alert.body["title"] == "acme/widgets · CI waiting for approval")
        #expect(alert.body["level"] == "time-sensitive")
        #expect(alert.body["body"]?.stringValue?.hasPrefix("Deployment to production waits for a review") == true)
    }

    @Test("rules: globs on every field, {default}, a run matching several rules alerts once per reason")
    func rules() {
        let run = AlertSubject(
            repository: "acme/payments", workflow: "Deploy prod", branch: "trunk", defaultBranch: "trunk",
            event: "push", actor: "dependabot[bot]")
        #expect(AlertRule.onDefaultBranch.matches(.failure, run))
        #expect(!AlertRule.onDefaultBranch.matches(.waiting, run))
        var unknownDefault = run
        unknownDefault.defaultBranch = nil
        #expect(!AlertRule.onDefaultBranch.matches(.failure, unknownDefault), "trunk is neither main nor master")
        unknownDefault.branch = "master"
        #expect(AlertRule.onDefaultBranch.matches(.failure, unknownDefault))
        #expect(AlertRule(when: [.failure], repositories: [GlobPattern("acme/*")]).matches(.failure, run))
        #expect(!AlertRule(when: [.failure], workflows: [GlobPattern("CI")]).matches(.failure, run))
        #expect(!AlertRule(when: [.failure], actors: [GlobPattern("*[bot]")]).matches(.fixed, run))
        #expect(AlertRule(when: [.failure], actors: [GlobPattern("*[bot]")]).matches(.failure, run))
        #expect(!AlertRule(when: [.failure], events: [GlobPattern("schedule")]).matches(.failure, run))
        let settings = AlertSettings(rules: [
            AlertRule(when: [.failure], level: .timeSensitive), AlertRule(when: [.failure, .fixed]),
        ])
        let planned = settings.alerts(for: [.failure, .fixed], run)
        #expect(planned.map(\.0) == [.failure, .fixed])
        #expect(planned.map(\.1) == [.timeSensitive, .active], "the first rule that covers a reason sets its level")
    }

    @Test("hostile names: bidi controls dropped, control characters spaced, every field within PushWard's limits")
    func hostileNames() throws {
        var engine = Self.engine([AlertRule(when: [.failure])])
        var script = RunScript(runID: 30, workflow: "CI\u{202E}gnp.exe", branch: "main\n\u{2066}x")
        script.repository = Repository(
            fullName: "evil/" + String(repeating: "👨‍👩‍👧‍👦", count: 80), htmlURL: "https://github.com/evil/x")
        script.actor = "<script>alert(1)</script>\u{0}"
        script.commitTitle = String(repeating: "é", count: 5_000)
        let waves = [[RunScript.Job("job\u{200F}\u{1B}[31m", duration: 5, conclusion: "failure")]]
        let alert = try #require(Self.play(script.deliveries(waves: waves), on: &engine).first)
        #expect(NotificationContract.violations(alert.body).isEmpty, "\(NotificationContract.violations(alert.body))")
        let title = try #require(alert.body["title"]?.stringValue)
        let body = try #require(alert.body["body"]?.stringValue)
        #expect(title.unicodeScalars.count <= 256 && title.hasSuffix("…"))
        #expect(title.hasPrefix("evil/👨‍👩‍👧‍👦"), "cut between whole characters")
        #expect(body.unicodeScalars.count <= 4_096 && body.hasSuffix("…"))
        for forbidden: Unicode.Scalar in ["\u{202E}", "\u{2066}", "\u{200F}", "\u{1B}", "\u{0}"] {
            #expect(!(title + body).unicodeScalars.contains(forbidden), "U+\(String(forbidden.value, radix: 16))")
        }
        #expect(body.contains("on main x"), "the newline in the branch became a space, the isolate went")
        #expect((alert.body["thread_id"]?.stringValue ?? "").count <= 128)
        #expect((alert.body["collapse_id"]?.stringValue ?? "").count <= 64)
    }

    @Test("clamping keeps whole characters and marks the cut")
    func clamping() {
        #expect(CardText.clamp("short", to: 10) == "short")
        #expect(CardText.clamp("abcdefghijk", to: 5) == "abcd…")
        // A flag is two scalars: it fits whole or not at all.
        #expect(CardText.clamp("ab🇫🇷cd", to: 4) == "ab…")
        #expect(CardText.clamp("ab🇫🇷cd", to: 5) == "ab🇫🇷…")
    }

    @Test("after each answer: sent, back off, drop the link, pause for quota or key, give up on a refusal")
    func retryPolicy() {
        let now: UnixTime = 1_000
        func step(_ answer: NotificationAnswer, attempts: Int = 1, link: Bool = true) -> AlertRetry.Step {
            AlertRetry.step(after: answer, attempts: attempts, namesActivity: link, at: now)
        }
        #expect(step(.sent(status: 201, id: 7, delivery: "all", reason: nil)) == .sent)
        #expect(step(.noAnswer(reason: "connection refused")) == .retry(at: now + 10))
        #expect(step(.noAnswer(reason: "timed out"), attempts: 3) == .retry(at: now + 40))
        #expect(step(.noAnswer(reason: "timed out"), attempts: 11) == .retry(at: now + 3_600), "capped")
        guard case .failed = step(.noAnswer(reason: "x"), attempts: AlertRetry.maximumAttempts) else {
            Issue.record("a transient failure must end")
            return
        }
        #expect(step(.problem(PushWardProblem(status: 503, retryAfter: 120))) == .retry(at: now + 120))
        #expect(
            step(.problem(PushWardProblem(status: 429, code: "rate_limit.exceeded", retryAfter: 60)))
                == .retry(at: now + 60))
        let quota = PushWardProblem(status: 429, code: "quota.exceeded", resetAt: 90_000, quotaKind: "notifications")
        guard case .pause(let until, _) = step(.problem(quota)) else {
            Issue.record("quota must pause")
            return
        }
        #expect(until == 90_000)
        guard
            case .pause(let refused, _) = step(
                .problem(PushWardProblem(status: 403, code: "integration_key.permission_denied")))
        else {
            Issue.record("a refused key must pause")
            return
        }
        #expect(refused == now + AlertRetry.refusalPause)
        let unknown = PushWardProblem(status: 422, code: "notification.activity_not_found")
        #expect(step(.problem(unknown)) == .retryWithoutActivity)
        guard case .failed = step(.problem(unknown), link: false) else {
            Issue.record("without a link, the same 422 is final")
            return
        }
        guard case .failed = step(.problem(PushWardProblem(status: 400, code: "notification.invalid"))) else {
            Issue.record("a refused body is not retried")
            return
        }
    }

    @Test(
        "configuration: off by default, {} turns on failures and fixes on the default branch, bad values name their key"
    )
    func configuration() throws {
        let off = try BridgeConfiguration(json: Data(#"{}"#.utf8))
        #expect(!off.alerts.isEnabled)
        let on = try BridgeConfiguration(json: Data(#"{"alerts": {}}"#.utf8))
        #expect(on.alerts.rules == [.onDefaultBranch])
        let custom = try BridgeConfiguration(
            json: Data(
                #"{"alerts": {"rules": [{"when": ["waiting"], "repositories": ["acme/*"], "branches": ["*"], "level": "time-sensitive"}]}}"#
                    .utf8))
        #expect(
            custom.alerts.rules == [
                AlertRule(when: [.waiting], repositories: [GlobPattern("acme/*")], level: .timeSensitive)
            ])
        for (json, key) in [
            (#"{"alerts": {"rules": [{"when": ["broken"]}]}}"#, "alerts.rules[0].when"),
            (#"{"alerts": {"rules": [{"level": "critical"}]}}"#, "alerts.rules[0].level"),
            (#"{"alerts": {"rules": [{"colour": "red"}]}}"#, "alerts.rules[0].colour"),
            (#"{"alerts": {"rules": ["failure"]}}"#, "alerts.rules[0]"),
        ] {
            #expect(throws: ConfigurationError.self) { try BridgeConfiguration(json: Data(json.utf8)) }
            do {
                _ = try BridgeConfiguration(json: Data(json.utf8))
            } catch {
                #expect(error.key == key)
            }
        }
    }
}
