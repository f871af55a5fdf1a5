import BridgeTestSupport
import Foundation
import Testing

@testable import BridgeCore

/// A job left queued: past `activity.runner_wait` the card says it waits for a runner, with the
/// job's labels and the minutes of that moment, in one update at the crossing and none after;
/// the crossing is the engine's timer's, with no delivery to cause it.
@Suite("runner wait")
struct RunnerWaitTests {
    static let script = RunScript()
    static let arm = ["self-hosted", "arm64"]

    static func settings(runnerWait: Double = 120) -> ActivitySettings {
        var settings = ActivitySettings.pushingEveryChange
        settings.runnerWait = runnerWait
        return settings
    }

    /// The requests after `count` that changed the card's text.
    static func textChanges(_ harness: BridgeHarness, after count: Int) -> [RenderSession.Output] {
        harness.sent.dropFirst(count).filter { $0.planned.request.body["content"]?["state"] != nil }
    }

    /// A run whose one job waits `wait` seconds for a runner, then runs 60 s and succeeds.
    static func run(waiting wait: Double, labels: [String] = arm) -> [(WebhookEvent, Double)] {
        let s = script
        return [
            (s.run("requested", at: 0), 0), (s.run("in_progress", at: 1), 1),
            (s.job(1, "build", "queued", createdAt: 2, labels: labels), 2),
            (s.job(1, "build", "in_progress", createdAt: 2, startedAt: 2 + wait, labels: labels), 2 + wait),
            (
                s.job(
                    1, "build", "completed", createdAt: 2, startedAt: 2 + wait, completedAt: 62 + wait,
                    conclusion: "success", labels: labels), 62 + wait
            ),
            (s.run("completed", at: 63 + wait, conclusion: "success"), 63 + wait),
        ]
    }

    static func played(_ events: [(WebhookEvent, Double)], _ settings: ActivitySettings) -> BridgeHarness {
        var harness = BridgeHarness(settings: settings)
        for (event, offset) in events { harness.feed(event, at: script.start + offset) }
        harness.finish()
        return harness
    }

    @Test("queued 12 minutes with runner_wait 12m: the text says so once, with the labels, then nothing for an hour")
    func oneUpdateAtTheCrossing() throws {
        var harness = BridgeHarness(settings: Self.settings(runnerWait: 720))
        let s = Self.script
        harness.feed(s.run("requested", at: 0), at: s.start)
        harness.feed(s.job(1, "test (arm64)", "queued", createdAt: 1, labels: Self.arm), at: s.start + 1)
        let before = harness.sent.count
        #expect(harness.engine.runBook.waits.next(after: s.start + 1) == s.start + 1 + 720)
        harness.run(until: s.start + 3_600)
        let changes = Self.textChanges(harness, after: before)
        #expect(changes.count == 1)
        let crossing = try #require(changes.first)
        #expect(crossing.at == s.start + 1 + 720)
        #expect(
            crossing.planned.request.body["content"]?["state"] == "Waiting for a runner · self-hosted, arm64 · 12 min")
        // What else went in the hour is upkeep (heartbeats), no content: nothing per minute.
        #expect(
            harness.sent.dropFirst(before).allSatisfy { $0.planned.kind == .update || $0.planned.kind == .heartbeat })
        #expect(harness.sent.dropFirst(before).filter { $0.planned.kind == .update }.count == 1)
        #expect(harness.violations.isEmpty)
        // The job starts: the card says what runs, as before.
        harness.feed(
            s.job(1, "test (arm64)", "in_progress", createdAt: 1, startedAt: 3_700, labels: Self.arm),
            at: s.start + 3_700)
        #expect(harness.stored()?.content["state"] == "Test")
        #expect(harness.engine.runBook.states.values.first?.runnerWait?.jobID == 1)
    }

    @Test("a job started within runner_wait never says it waited")
    func noWaitBelowTheThreshold() throws {
        let harness = Self.played(Self.run(waiting: 119), Self.settings())
        #expect(
            !harness.sent.contains {
                $0.planned.request.body["content"]?["state"]?.stringValue?.hasPrefix("Waiting for a runner") == true
            })
        #expect(harness.engine.runBook.states.values.allSatisfy { $0.runnerWait == nil })
    }

    @Test("a shard queued while another job of the run runs is not news: no wait is said")
    func nothingWhileAJobRuns() throws {
        var harness = BridgeHarness(settings: Self.settings())
        let s = Self.script
        harness.feed(s.run("requested", at: 0), at: s.start)
        harness.feed(s.job(1, "test (1)", "queued", createdAt: 1), at: s.start + 1)
        harness.feed(s.job(2, "test (2)", "queued", createdAt: 1, labels: Self.arm), at: s.start + 1)
        harness.feed(s.job(1, "test (1)", "in_progress", createdAt: 1, startedAt: 5), at: s.start + 5)
        harness.run(until: s.start + 600)
        #expect(
            !harness.sent.contains {
                $0.planned.request.body["content"]?["state"]?.stringValue?.hasPrefix("Waiting") == true
            })
        // Once nothing else runs, the shard still queued is said, with the minutes of that moment.
        harness.feed(
            s.job(1, "test (1)", "completed", createdAt: 1, startedAt: 5, completedAt: 600, conclusion: "success"),
            at: s.start + 600)
        #expect(harness.stored()?.content["state"] == "Waiting for a runner · self-hosted, arm64 · 9 min")
    }

    @Test("labels and names from the payload are made plain and the text clamped as every card text")
    func hostileLabels() throws {
        var harness = BridgeHarness(settings: Self.settings())
        let s = Self.script
        let labels = ["self-hosted\u{202E}", "line\u{2028}break", String(repeating: "🇩🇪", count: 200)]
        harness.feed(s.run("requested", at: 0), at: s.start)
        harness.feed(s.job(1, "build", "queued", createdAt: 1, labels: labels), at: s.start + 1)
        harness.run(until: s.start + 200)
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        let state = try #require(harness.stored()?.content["state"]?.stringValue)
        #expect(state.hasPrefix("Waiting for a runner · self-hosted, line break, 🇩🇪"))
        #expect(state.unicodeScalars.count <= ActivityContentBuilder.textLimit)
        #expect(!state.unicodeScalars.contains { [0x202E, 0x2028].contains($0.value) })
    }

    @Test("recorded payloads: a queued job with created_at waits; one without (legacy) has no wait to measure")
    func recordedPayloads() throws {
        let queued = try WebhookDecoder.decode(
            event: "workflow_job", body: Fixtures.data("workflow_job.queued.attempt3.json"), contentType: nil)
        guard case .workflowJob(let delivery) = queued else {
            Issue.record("not a workflow_job")
            return
        }
        let created = try #require(delivery.job.createdAt)
        var engine = BridgeEngine(settings: Self.settings())
        _ = engine.receive(queued, at: created + 5)
        #expect(engine.nextWakeup(after: created + 5) == created + 120)
        _ = engine.dueRequests(at: created + 125, inFlight: [])
        let state = try #require(engine.runBook.states.values.first)
        let wait = try #require(state.runnerWait)
        #expect(wait.labels == ["ubuntu-latest"])
        #expect(wait.cardText(limit: 256) == "Waiting for a runner · ubuntu-latest · 2 min")

        let legacy = try WebhookDecoder.decode(
            event: "workflow_job", body: Fixtures.data("workflow_job.queued.legacy-tf-aws-runner.json"),
            contentType: nil)
        var other = BridgeEngine(settings: Self.settings())
        _ = other.receive(legacy, at: 1_000)
        _ = other.dueRequests(at: 100_000, inFlight: [])
        #expect(other.runBook.states.values.allSatisfy { $0.runnerWait == nil })
    }

    @Test("recovery's lookups of the quiet run (heardFromAPI) never say the wait again")
    func lookupsAddNothing() throws {
        let s = Self.script
        var engine = BridgeEngine(settings: Self.settings())
        _ = engine.receive(s.run("requested", at: 0), at: s.start)
        _ = engine.receive(s.job(1, "build", "queued", createdAt: 1, labels: Self.arm), at: s.start + 1)
        _ = engine.dueRequests(at: s.start + 125, inFlight: [])
        let key = try #require(engine.runBook.states.keys.first)
        let noticed = try #require(engine.runBook[key]?.runnerWait)
        for minute in stride(from: 5.0, through: 60, by: 5) {
            engine.heardFromAPI(key, at: s.start + minute * 60)
            _ = engine.dueRequests(at: s.start + minute * 60, inFlight: [])
        }
        #expect(engine.runBook[key]?.runnerWait == noticed)
        #expect(engine.runBook.waits.next(after: s.start + 3_600) == nil)
    }

    @Test("a wait said, then another job ran: said again with the minutes of that moment")
    func saidAgainAfterAnotherJob() throws {
        var harness = BridgeHarness(settings: Self.settings())
        let s = Self.script
        harness.feed(s.run("requested", at: 0), at: s.start)
        harness.feed(s.job(1, "deploy", "queued", createdAt: 1, labels: Self.arm), at: s.start + 1)
        harness.run(until: s.start + 200)
        #expect(harness.stored()?.content["state"] == "Waiting for a runner · self-hosted, arm64 · 2 min")
        harness.feed(s.job(2, "notify", "queued", createdAt: 300), at: s.start + 300)
        harness.feed(s.job(2, "notify", "in_progress", createdAt: 300, startedAt: 302), at: s.start + 302)
        harness.feed(
            s.job(2, "notify", "completed", createdAt: 300, startedAt: 302, completedAt: 600, conclusion: "success"),
            at: s.start + 600)
        #expect(harness.stored()?.content["state"] == "Waiting for a runner · self-hosted, arm64 · 9 min")
    }

    @Test("a wait of hours is said in hours")
    func hours() {
        #expect(RunnerWait.duration(minutes: 0) == "0 min")
        #expect(RunnerWait.duration(minutes: 59) == "59 min")
        #expect(RunnerWait.duration(minutes: 60) == "1 h")
        #expect(RunnerWait.duration(minutes: 95) == "1 h 35 min")
    }

    /// Against a run whose job waits 100 s, under `runner_wait`: a job that starts within the settle
    /// window rides its queued frame on its start, so a 2 s wait would also save the update any
    /// wait past `coalesce` costs, which is not the crossing's.
    @Test("cost: a run that waited for a runner spends exactly one update more than the same run without")
    func costOfTheCrossing() {
        let quick = Self.played(Self.run(waiting: 100), ActivitySettings())
        let waited = Self.played(Self.run(waiting: 12 * 60), ActivitySettings())
        #expect(quick.violations.isEmpty && waited.violations.isEmpty)
        #expect(waited.sent.count == quick.sent.count + 1, "quick \(quick.sent.count), waited \(waited.sent.count)")
        #expect(quick.sent.count == 6)
        #expect(
            waited.sent.filter {
                $0.planned.request.body["content"]?["state"]?.stringValue?.hasPrefix("Waiting for a runner") == true
            }.count == 1)
        #expect(quick.stored()?.content == waited.stored()?.content)
    }

    /// The first failure goes at once (it is never coalesced), so a failing run spends one update
    /// more than its passing twin; the step, the count and the job's link add none.
    @Test("cost: a failing four-shard matrix run, its failed step and count riding on frames it sends anyway")
    func costOfAFailingMatrix() {
        let waves = [
            [RunScript.Job("lint")],
            [
                RunScript.Job("test (shard-1)"), RunScript.Job("test (shard-2)", conclusion: "failure"),
                RunScript.Job("test (shard-3)", conclusion: "failure"), RunScript.Job("test (shard-4)"),
            ],
        ]
        var failing = BridgeHarness(settings: ActivitySettings())
        failing.play(Self.script.deliveries(waves: waves))
        var passing = BridgeHarness(settings: ActivitySettings())
        passing.play(Self.script.deliveries(waves: waves.map { $0.map { RunScript.Job($0.name) } }))
        #expect(failing.violations.isEmpty)
        #expect(failing.stored()?.content["state"] == "Failed: test (shard-2) · Run · 2 of 4 failed")
        #expect(failing.sent.count == 7, "failing \(failing.sent.count), passing \(passing.sent.count)")
        #expect(passing.sent.count == 6)
    }
}
