import BridgeTestSupport
import Testing

@testable import BridgeCore

/// `activity.template: generic`: the whole run as one bar, through the same engine, reconciler
/// and lifecycle as the steps card, checked against the fake's reading of the generic template.
@Suite("generic template")
struct GenericTemplateTests {
    let script = RunScript()
    let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (mac)", duration: 90)],
        [RunScript.Job("deploy", duration: 30)],
    ]

    static var settings: ActivitySettings {
        var settings = ActivitySettings.pushingEveryChange
        settings.template = .generic
        return settings
    }

    /// A harness that has seen one earlier run of the same workflow: history estimates each step.
    func withHistory() -> BridgeHarness {
        var harness = BridgeHarness(settings: Self.settings)
        harness.play(script.deliveries(waves: waves))
        return harness
    }

    var second: RunScript {
        var run = RunScript(runID: 9_001, runNumber: 43, start: script.start + 3_600, firstJobID: 60_000)
        run.repository = script.repository
        return run
    }

    @Test("one bar: a full first frame of the generic template that clears every steps field, then the end")
    func lifecycle() throws {
        var harness = BridgeHarness(settings: Self.settings)
        harness.play(script.deliveries(waves: waves))
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        let requests = harness.sent.map(\.planned)
        #expect(requests.first?.request.method == .post)
        let first = try #require(requests.dropFirst().first?.request.body["content"]?.objectValue)
        #expect(first["template"] == "generic")
        for field in Reconciler.stepArrays + ["current_step", "total_steps"] {
            #expect(first[field] == .null, "the first frame clears \(field)")
        }
        #expect(first["remaining_time"] == .null, "no estimate without history")
        let stored = try #require(harness.stored())
        #expect(stored.state == "ended")
        #expect(stored.content["template"] == "generic")
        #expect(stored.content["progress"] == 1)
        #expect(stored.content["state"] == "Succeeded")
        #expect(stored.content["accent_color"] == "green")
        #expect(stored.content["current_step"] == nil && stored.content["step_rows"] == nil)
        #expect(harness.patchContents.allSatisfy { $0["total_steps"] == nil || $0["total_steps"] == .null })
        // The bar never costs more than the steps card of the same run (it shows less that can change).
        var steps = BridgeHarness()
        steps.play(script.deliveries(waves: waves))
        #expect(harness.sent.count <= steps.sent.count, "\(harness.sent.count) vs \(steps.sent.count)")
        #expect(harness.sent.count >= 4, "create, first frame, end frame, end")
    }

    @Test("progress over the whole run only rises, and the state names the current job group")
    func progress() throws {
        var harness = withHistory()
        harness.play(second.deliveries(waves: waves))
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        let frames = harness.sent.filter { $0.planned.run.runID == 9_001 }.compactMap {
            $0.planned.request.body["content"]?.objectValue
        }
        let progress = frames.compactMap { $0["progress"]?.doubleValue }
        #expect(progress.count >= 4)
        #expect(zip(progress, progress.dropFirst()).allSatisfy { $0 <= $1 }, "\(progress)")
        #expect(progress.last == 1)
        let states = frames.compactMap { $0["state"]?.stringValue }
        #expect(states.contains("Lint") && states.contains { $0.hasPrefix("Build") } && states.contains("Deploy"))
    }

    @Test(
        "with history, a window over the rest of the run: live_progress, duration and remaining_time; the end clears it"
    )
    func window() throws {
        var harness = withHistory()
        harness.play(second.deliveries(waves: waves))
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        let sent = harness.sent.filter { $0.planned.run.runID == 9_001 }
        let windows = sent.compactMap { output -> (at: UnixTime, remaining: Int)? in
            guard let content = output.planned.request.body["content"]?.objectValue, content["live_progress"] == true,
                let remaining = content["remaining_time"]?.intValue, content["duration"]?.intValue == remaining
            else { return nil }
            return (output.at, remaining)
        }
        let first = try #require(windows.first)
        // At the first step the whole run is ahead: about 20 + 90 + 30 seconds of history.
        #expect((100...150).contains(first.remaining), "\(windows)")
        #expect(windows.count >= 2, "re-anchored as steps change")
        let final = try #require(sent.first { $0.planned.kind == .finalFrame }?.planned.request.body["content"])
        #expect(final["end_date"] == .null)
        #expect(final["live_progress"] == .null)
        #expect(final["remaining_time"] == .null)
        let stored = try #require(harness.stored())
        #expect(stored.content["end_date"] == nil && stored.content["live_progress"] == nil)
    }

    @Test("a failed job turns the bar red at once; the end names the failed step")
    func failure() throws {
        let failing: [[RunScript.Job]] = [
            [RunScript.Job("lint")],
            [RunScript.Job("test (a)", duration: 10, conclusion: "failure"), RunScript.Job("test (b)", duration: 50)],
        ]
        var harness = BridgeHarness(settings: Self.settings)
        harness.play(script.deliveries(waves: failing))
        #expect(harness.violations.isEmpty, "\(harness.violations)")
        #expect(harness.patchContents.contains { $0["accent_color"] == "red" && $0["state"] == "Test 1/2" })
        let stored = try #require(harness.stored())
        // The failing shard, its failed step and how many of the group failed (`FailureSummary`).
        #expect(stored.content["state"] == "Failed: test (a) · Run · 1 of 2 failed")
        #expect(stored.content["accent_color"] == "red")
    }

    @Test("the phone's drawing: one bar filled to progress, the percentage as its counter")
    func layout() {
        let live = CardLayout(content: [
            "template": "generic", "progress": 0.42, "state": "Build", "accent_color": "red",
        ])
        #expect(live.style == .bar)
        #expect(live.segments.count == 1)
        #expect(live.segments.first?.fill == 0.42)
        #expect(live.segments.first?.color == "red")
        #expect(live.counter == "42%")
        let ended = CardLayout(content: ["template": "generic", "progress": 0.5], isEnded: true)
        #expect(ended.segments.first?.fill == 1)
        #expect(ended.counter == "100%")
    }

    @Test("the fake holds the generic template to its document")
    func contract() {
        let valid: [String: JSONValue] = [
            "template": "generic", "progress": 0.4, "state": "Downloading", "icon": "arrow.down.circle",
            "subtitle": "ubuntu-24.04.iso", "end_date": 1_750_003_600, "live_progress": true, "accent_color": "cyan",
            "remaining_time": 1_800, "compact_label": "2/3",
        ]
        #expect(ContractValidator.validateContent(valid).isEmpty)
        func with(_ key: String, _ value: JSONValue?) -> [String: JSONValue] {
            var content = valid
            content[key] = value
            return content
        }
        let breaches: [([String: JSONValue], String)] = [
            (with("progress", nil), "progress"), (with("progress", 1.5), "progress"),
            (with("progress", -0.1), "progress"), (with("remaining_time", -1), "remaining_time"),
            (with("remaining_time", "30"), "remaining_time"), (with("end_date", nil), "live_progress"),
            (with("start_date", 1_750_003_601), "end_date"), (with("total_steps", 3), "total_steps"),
            (with("step_rows", [1]), "step_rows"), (with("template", "countdown"), "template"),
        ]
        for (content, field) in breaches {
            let violations = ContractValidator.validateContent(content)
            #expect(violations.contains { $0.field == field }, "\(field): \(violations)")
        }
    }
}
