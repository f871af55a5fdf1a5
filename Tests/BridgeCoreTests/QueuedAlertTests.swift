import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// The `queued` alert: a job still queued `queued_after` (a rule's, default 30 minutes) after it
/// was created is said once per run, found by the engine's timer and planned with the other
/// alerts, long before GitHub cancels the job at 24 hours.
@Suite("queued alert")
struct QueuedAlertTests {
    static let script = RunScript()
    static let arm = ["self-hosted", "arm64"]

    static func engine(_ rules: [AlertRule]) -> BridgeEngine {
        BridgeEngine(
            configuration: EngineConfiguration(settings: ActivitySettings(), alerts: AlertSettings(rules: rules)))
    }

    /// The engine with a run whose one job was queued at `start + 2` and never started.
    static func queued(_ rules: [AlertRule], branch: String = "main") -> BridgeEngine {
        var script = Self.script
        script.branch = branch
        var engine = Self.engine(rules)
        _ = engine.receive(script.run("requested", at: 0), at: script.start)
        _ = engine.receive(
            script.job(7, "test (arm64)", "queued", createdAt: 2, labels: Self.arm), at: script.start + 2)
        _ = engine.takeChanges()
        return engine
    }

    /// Moves the engine's time to `offset` after the script's start, as the dispatcher does
    /// (`dueRequests`, then the planning of what the timers found), and takes the alerts planned.
    static func alerts(_ engine: inout BridgeEngine, at offset: Double) -> [PlannedAlert] {
        _ = engine.dueRequests(at: script.start + offset, inFlight: [])
        engine.planAlerts(history: RunHistory())
        return engine.takeChanges().alerts
    }

    @Test("queued 30 minutes: one alert naming the job, its wait and labels, linking the job; never again")
    func onceAtQueuedAfter() throws {
        var engine = Self.queued([AlertRule(when: [.queued])])
        // The card's crossing (runner_wait, 2 minutes) comes first, and alerts nothing.
        #expect(Self.alerts(&engine, at: 200).isEmpty)
        #expect(engine.runBook.waits.next(after: Self.script.start + 200) == Self.script.start + 2 + 1_800)
        #expect(Self.alerts(&engine, at: 2 + 1_799).isEmpty)
        let alerts = Self.alerts(&engine, at: 2 + 1_800)
        let alert = try #require(alerts.first)
        #expect(alerts.count == 1)
        #expect(alert.reason == .queued)
        #expect(alert.body["title"] == "acme/widgets · CI waiting for a runner")
        let body = try #require(alert.body["body"]?.stringValue)
        #expect(body.hasPrefix("test (arm64) queued for 30 min · self-hosted, arm64\non main"))
        #expect(alert.body["url"] == "https://github.com/acme/widgets/actions/runs/9000/job/7")
        #expect(Self.alerts(&engine, at: 2 + 7_200).isEmpty)
        // Both crossings noticed: the timer has nothing left to wait for in this run.
        #expect(engine.runBook.waits.next(after: Self.script.start + 7_200) == nil)
        #expect(engine.runBook.states.values.first?.queuedAlertAt == Self.script.start + 2 + 1_800)
    }

    @Test("queued_after is the rule's: the first rule covering the run whose wait has passed decides the level")
    func perRuleThreshold() throws {
        let rules = [
            AlertRule(when: [.queued], branches: [GlobPattern("release/*")], level: .timeSensitive, queuedAfter: 600),
            AlertRule(when: [.queued], queuedAfter: 3_600),
        ]
        var release = Self.queued(rules, branch: "release/2.0")
        let early = Self.alerts(&release, at: 2 + 600)
        #expect(early.map(\.reason) == [.queued])
        #expect(early.first?.body["level"] == "time-sensitive")
        // On main only the hour's rule covers the run: nothing at ten minutes, its alert at an hour.
        var main = Self.queued(rules)
        #expect(Self.alerts(&main, at: 200).isEmpty)
        #expect(main.runBook.waits.next(after: Self.script.start + 200) == Self.script.start + 2 + 3_600)
        #expect(Self.alerts(&main, at: 2 + 600).isEmpty)
        let late = Self.alerts(&main, at: 2 + 3_600)
        #expect(late.first?.body["level"] == "active")
        #expect(late.first?.body["body"]?.stringValue?.hasPrefix("test (arm64) queued for 1 h") == true)
    }

    @Test("no rule names queued: the timer waits for no alert, and none is planned")
    func withoutTheReason() {
        var engine = Self.queued([AlertRule(when: [.failure, .fixed])])
        // The card's runner wait (2 minutes) is the only crossing.
        #expect(Self.alerts(&engine, at: 200).isEmpty)
        #expect(engine.runBook.waits.next(after: Self.script.start + 200) == nil)
        #expect(Self.alerts(&engine, at: 2 + 86_000).isEmpty)
    }

    @Test("a job that started before queued_after raises nothing")
    func startedInTime() {
        var engine = Self.queued([AlertRule(when: [.queued])])
        _ = engine.receive(
            Self.script.job(7, "test (arm64)", "in_progress", createdAt: 2, startedAt: 1_000, labels: Self.arm),
            at: Self.script.start + 1_000)
        #expect(Self.alerts(&engine, at: 2 + 3_600).isEmpty)
    }

    @Test("configuration: queued in when, queued_after a duration (default 30m, 1m to 23h), runner_wait (default 2m)")
    func configuration() throws {
        func parse(_ text: String) throws -> BridgeConfiguration {
            try BridgeConfiguration(json: Data(text.utf8))
        }
        let defaults = try parse("{\"alerts\": {\"rules\": [{\"when\": [\"queued\"]}]}}")
        #expect(defaults.alerts.rules.first?.when == [.queued])
        #expect(defaults.alerts.rules.first?.queuedAfter == 1_800)
        #expect(defaults.activity.runnerWait == 120)
        let set = try parse(
            "{\"activity\": {\"runner_wait\": \"12m\"}, "
                + "\"alerts\": {\"rules\": [{\"when\": [\"queued\"], \"queued_after\": \"45m\"}]}}")
        #expect(set.alerts.rules.first?.queuedAfter == 2_700)
        #expect(set.activity.runnerWait == 720)
        #expect(throws: ConfigurationError.self) {
            try parse("{\"alerts\": {\"rules\": [{\"when\": [\"queued\"], \"queued_after\": \"25h\"}]}}")
        }
        #expect(throws: ConfigurationError.self) { try parse("{\"activity\": {\"runner_wait\": \"5s\"}}") }
    }
}
