import BridgeTestSupport
import Testing

@testable import BridgeCore

/// The full frame (a run's first frame, and the frame after a failover, a restart, a 404 or a
/// refusal) with an ETA window: PushWard lets a present `end_date` win over `duration`, a `null`
/// one included, so a frame that nulled the window's dates beside its `duration` left
/// `live_progress` with no window and was refused (`422 live_progress requires end_date or
/// duration`). Each case goes through `Reconciler.decide` and then the in-memory PushWard.
@Suite("full frames with a live window")
struct FullFrameTests {
    static let now: UnixTime = 1_700_000_000
    static let run = RunKey(repository: "acme/widgets", runID: 9_001, attempt: 1)
    static let identity = ActivityIdentity(slug: "gh-0123abcd", name: "GitHub: widgets")

    /// A steps card on step 2 of 3 (no window fields: those follow `window`).
    static let stepsContent: [String: JSONValue] = [
        "template": "steps", "progress": 0.4, "current_step": 2, "total_steps": 3, "step_rows": [1, 2, 1],
        "step_labels": ["lint", "build \u{202E}exe.txt", "deploy 🚀"], "step_weights": [20, 90, 30],
        "step_colors": ["green", "blue", ""], "state": "build", "icon": "hammer", "accent_color": "blue",
        "url": "https://github.com/acme/widgets/actions/runs/9001",
    ]
    /// The generic template's bar for the same run.
    static let genericContent: [String: JSONValue] = [
        "template": "generic", "progress": 0.4, "state": "build", "icon": "hammer", "accent_color": "blue",
        "url": "https://github.com/acme/widgets/actions/runs/9001",
    ]

    /// What an earlier run left on the slug: its own window, long over.
    static let earlierRun = StoredActivity(
        state: "ongoing",
        content: stepsContent.merging([
            "live_progress": true, "start_date": .number(now - 900), "end_date": .number(now - 800),
        ]) { _, earlier in earlier }, name: identity.name, priority: 1)

    /// 120 s expected for step 2, started 16 s ago: 104 s ahead.
    static let window = LiveWindow(step: 2, estimate: 120, startedAt: now - 16)

    static func desired(_ content: [String: JSONValue]) -> DesiredActivity {
        DesiredActivity(run: run, content: content, window: window, isFinal: false, step: 2)
    }

    /// A session in `phase` for `run`, PushWard holding `earlierRun`.
    static func session(_ phase: ActivitySession.Phase, needsFullFrame: Bool) -> ActivitySession {
        var session = ActivitySession(identity: identity)
        session.assign(to: run)
        session.phase = phase
        session.needsFullFrame = needsFullFrame
        if phase == .live { session.acknowledged = earlierRun }
        return session
    }

    /// The PATCH `decide` plans for `session`.
    static func planned(_ session: ActivitySession, _ desired: DesiredActivity) throws -> PlannedRequest {
        let decision = Reconciler.decide(
            session: session, desired: desired, settings: .pushingEveryChange, now: now)
        guard case .send(let planned) = decision else { throw TestFailure("no request: \(decision)") }
        return planned
    }

    /// A PushWard holding `earlierRun` on the slug.
    static func server() -> InMemoryPushWard {
        var server = InMemoryPushWard()
        let post: JSONValue = ["slug": .string(identity.slug), "name": .string(identity.name), "priority": 1]
        server.handle(PushWardRequest(method: .post, slug: identity.slug, body: post), at: now - 1_000)
        let earlier = PushWardRequest(
            method: .patch, slug: identity.slug,
            body: ["state": "ongoing", "content": .object(earlierRun.content)])
        server.handle(earlier, at: now - 1_000)
        return server
    }

    static let phases: [(ActivitySession.Phase, Bool)] = [(.needsFirstFrame, false), (.live, true)]

    @Test("a steps full frame sends live_progress and duration, leaves the dates out, and PushWard keeps the window")
    func stepsFullFrame() throws {
        for (phase, full) in Self.phases {
            let planned = try Self.planned(Self.session(phase, needsFullFrame: full), Self.desired(Self.stepsContent))
            let content = try #require(planned.request.body["content"]?.objectValue)
            let remaining = try #require(Self.window.remaining(at: Self.now))
            #expect(content["live_progress"] == true, "\(phase)")
            #expect(content["duration"] == .number(Double(remaining)), "\(phase)")
            #expect(content["start_date"] == nil && content["end_date"] == nil, "\(phase): \(content)")
            // Everything else the bridge owns is still set or cleared: nothing of the earlier run stays.
            for field in Reconciler.ownedFields where !Reconciler.durationSets.contains(field) {
                #expect(content[field] != nil, "\(phase): \(field)")
            }

            var server = Self.server()
            #expect(server.handle(planned.request, at: Self.now) == 200, "\(phase): \(server.violations)")
            let stored = try #require(server.activities[Self.identity.slug])
            #expect(stored.content["live_progress"] == true)
            #expect(stored.content["start_date"] == .number(Self.now))
            #expect(stored.content["end_date"] == .number(Self.now + Double(remaining)))
            // The bridge's own reading of the answer agrees with the server's.
            let acknowledged = Reconciler.acknowledge(
                planned, session: Self.session(phase, needsFullFrame: full), settings: .pushingEveryChange,
                at: Self.now)
            #expect(acknowledged.acknowledged?.content == stored.content, "\(phase)")
        }
    }

    @Test("a generic full frame carries duration and remaining_time and no window dates")
    func genericFullFrame() throws {
        for (phase, full) in Self.phases {
            let planned = try Self.planned(
                Self.session(phase, needsFullFrame: full), Self.desired(Self.genericContent))
            let content = try #require(planned.request.body["content"]?.objectValue)
            let remaining = try #require(Self.window.remaining(at: Self.now))
            #expect(content["duration"] == .number(Double(remaining)))
            #expect(content["remaining_time"] == .number(Double(remaining)))
            #expect(content["start_date"] == nil && content["end_date"] == nil, "\(phase): \(content)")
            #expect(content["total_steps"] == .null && content["step_rows"] == .null, "the steps fields are cleared")

            var server = Self.server()
            #expect(server.handle(planned.request, at: Self.now) == 200, "\(phase): \(server.violations)")
            #expect(server.activities[Self.identity.slug]?.content["end_date"] == .number(Self.now + Double(remaining)))
        }
    }

    @Test("a full frame without an estimate clears the earlier run's window: live_progress and both dates nulled")
    func fullFrameWithoutWindow() throws {
        var desired = Self.desired(Self.stepsContent)
        desired.window = nil
        let planned = try Self.planned(Self.session(.live, needsFullFrame: true), desired)
        let content = try #require(planned.request.body["content"]?.objectValue)
        #expect(content["duration"] == nil)
        for field in ["live_progress", "start_date", "end_date"] { #expect(content[field] == .null, "\(field)") }
        var server = Self.server()
        #expect(server.handle(planned.request, at: Self.now) == 200, "\(server.violations)")
        let stored = try #require(server.activities[Self.identity.slug])
        #expect(stored.content["live_progress"] == nil && stored.content["end_date"] == nil)
    }

    @Test("no request of a run with history carries duration beside start_date or end_date, on either template")
    func noAmbiguousBodyOnAnyPath() {
        let script = RunScript()
        let waves: [[RunScript.Job]] = [
            [RunScript.Job("lint", duration: 20)],
            [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (mac)", duration: 90)],
            [RunScript.Job("deploy", duration: 30)],
        ]
        for template in [ActivitySettings.Template.steps, .generic] {
            var settings = ActivitySettings.pushingEveryChange
            settings.template = template
            var harness = BridgeHarness(settings: settings)
            harness.play(script.deliveries(waves: waves))
            var second = RunScript(runID: 9_001, runNumber: 43, start: script.start + 3_600, firstJobID: 60_000)
            second.repository = script.repository
            harness.play(second.deliveries(waves: waves))
            #expect(harness.violations.isEmpty, "\(template): \(harness.violations)")
            let windows = harness.patchContents.filter { $0["duration"] != nil }
            #expect(!windows.isEmpty, "\(template): the second run has estimates")
            for content in windows {
                #expect(content["start_date"] == nil && content["end_date"] == nil, "\(template): \(content)")
            }
        }
    }
}
