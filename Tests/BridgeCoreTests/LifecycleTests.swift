import BridgeTestSupport
import Testing

@testable import BridgeCore

@Suite("Activity lifecycle")
struct LifecycleTests {
    let script = RunScript()
    let waves: [[RunScript.Job]] = [
        [RunScript.Job("lint", duration: 20)],
        [RunScript.Job("build (linux)", duration: 60), RunScript.Job("build (mac)", duration: 90)],
        [RunScript.Job("deploy", duration: 30)],
    ]

    private func played(_ events: [WebhookEvent], settings: ActivitySettings = .pushingEveryChange) -> BridgeHarness {
        var harness = BridgeHarness(settings: settings)
        harness.play(events)
        return harness
    }

    @Test("a run starts with POST and a full first frame, and ends in two phases")
    func fullLifecycle() throws {
        let harness = played(script.deliveries(waves: waves))
        #expect(harness.violations.isEmpty)
        let requests = harness.sent.map(\.planned)
        #expect(requests.first?.request.method == .post)
        let post = try #require(requests.first?.request.body.objectValue)
        #expect(post["priority"] == 1)
        // PushWard keeps the ended activity for the next run (its longest ended_ttl); the Lock
        // Screen keeps the ended card the configured 15 minutes (dismissal_ttl).
        #expect(post["ended_ttl"] == 2_592_000)
        #expect(post["dismissal_ttl"] == 900)
        #expect(post["stale_ttl"] == 1_800)
        #expect(requests[1].kind == .firstFrame)
        let first = try #require(requests[1].request.body["content"]?.objectValue)
        for field in Reconciler.ownedFields { #expect(first[field] != nil, "first frame must set or null \(field)") }
        #expect(requests[1].request.body["state"] == "ongoing")

        let final = try #require(harness.sent.first { $0.planned.kind == .finalFrame })
        let completedAt = script.start + 2 + 23 + 93 + 33 + 1 - 1
        #expect(final.at >= completedAt + 5)
        let end = try #require(harness.sent.last)
        #expect(end.planned.kind == .end)
        #expect(end.planned.request.body == ["state": "ended"])
        #expect(end.at == final.at + 4)

        let stored = try #require(harness.stored())
        #expect(stored.state == "ended")
        #expect(stored.content["current_step"] == stored.content["total_steps"])
        #expect(stored.content["total_steps"] == 3)
        #expect(stored.content["progress"] == 1)
        #expect(stored.content["accent_color"] == "green")
        #expect(stored.content["state"] == "Succeeded")
        #expect(stored.content["step_rows"] == [1, 2, 1])
        #expect(stored.content["live_progress"] == nil)
    }

    @Test("the end frame nulls a live window and is never delayed by the throttle")
    func endFrameClearsWindow() throws {
        var history = BridgeHarness()
        history.play(script.deliveries(waves: waves))
        var second = RunScript(runID: 9_001, runNumber: 43, start: script.start + 3_600, firstJobID: 60_000)
        second.repository = script.repository
        var harness = history
        harness.play(second.deliveries(waves: waves))
        #expect(harness.violations.isEmpty)
        let finals = harness.sent.filter { $0.planned.kind == .finalFrame && $0.planned.run.runID == 9_001 }
        let final = try #require(finals.first?.planned.request.body["content"]?.objectValue)
        #expect(final["live_progress"] == .null)
        #expect(final["end_date"] == .null)
    }

    @Test("failure: red, naming the first failed step, and the step turns red as soon as its job fails")
    func failure() throws {
        let failing: [[RunScript.Job]] = [
            [RunScript.Job("lint")],
            [RunScript.Job("test (a)", duration: 10, conclusion: "failure"), RunScript.Job("test (b)", duration: 50)],
        ]
        let harness = played(script.deliveries(waves: failing))
        #expect(harness.violations.isEmpty)
        let stored = try #require(harness.stored())
        #expect(stored.content["state"] == "Failed: test (a) · Run · 1 of 2 failed")
        #expect(stored.content["accent_color"] == "red")
        // The card opens the failing job, where the error is, not the run.
        #expect(stored.content["url"]?.stringValue?.contains("/job/") == true, "\(stored.content["url"] ?? .null)")
        #expect(stored.content["step_colors"] == ["purple", "red"])
        // Red while test (b) was still running: the frame that reported test (a)'s failure.
        let redWhileRunning = harness.patchContents.contains { content in
            content["step_colors"]?.arrayValue?.dropFirst().first == "red" && content["state"] == "Test 1/2"
        }
        #expect(redWhileRunning)
    }

    @Test(
        "end frames by conclusion",
        arguments: [
            ("success", "Succeeded", "green"), ("cancelled", "Cancelled", "#8E8E93"), ("timed_out", "Timed out", "red"),
            ("action_required", "Needs approval", "orange"), ("skipped", "Skipped", "#8E8E93"),
            ("neutral", "Neutral", "#8E8E93"),
        ])
    func conclusions(conclusion: String, state: String, accent: String) throws {
        let harness = played(script.deliveries(waves: [[RunScript.Job("build")]], conclusion: conclusion))
        #expect(harness.violations.isEmpty)
        let stored = try #require(harness.stored())
        #expect(stored.content["state"] == .string(state))
        #expect(stored.content["accent_color"] == .string(accent))
    }

    @Test("a run awaiting approval (requested, completed, action_required) draws no card until it starts")
    func approvalRun() throws {
        let harness = played(
            [script.run("requested", at: 0, conclusion: "action_required")].map { event in
                guard case .workflowRun(var delivery) = event else { return event }
                delivery.run.status = .completed
                return .workflowRun(delivery)
            })
        #expect(harness.violations.isEmpty)
        #expect(harness.sent.isEmpty, "held for approval: nothing ran, nothing is paid for (CardWithholdingTests)")
        #expect(harness.engine.runs.values.first?.isHeldForApproval == true)
    }

    @Test("a job waiting for an environment says so")
    func waitingForApproval() throws {
        var harness = BridgeHarness()
        harness.feed(
            script.job(1, "build", "completed", createdAt: 0, startedAt: 1, completedAt: 5, conclusion: "success"))
        harness.feed(script.job(2, "deploy", "waiting", createdAt: 6, environment: "production"))
        #expect(harness.violations.isEmpty)
        let states = harness.patchContents.compactMap { $0["state"]?.stringValue }
        #expect(states.last == "Waiting for approval: production")
    }

    @Test("a fan-out says how far it is")
    func fanOutState() {
        var harness = BridgeHarness()
        let jobs = ["test (1)", "test (2)", "test (3)"]
        for (index, name) in jobs.enumerated() {
            harness.feed(script.job(10 + index, name, "in_progress", createdAt: 0, startedAt: 1))
        }
        harness.feed(
            script.job(10, jobs[0], "completed", createdAt: 0, startedAt: 1, completedAt: 30, conclusion: "success"))
        harness.feed(
            script.job(11, jobs[1], "completed", createdAt: 0, startedAt: 1, completedAt: 40, conclusion: "success"))
        #expect(harness.violations.isEmpty)
        #expect(harness.patchContents.last?["state"] == "Test 2/3")
    }

    @Test("a run whose completed delivery is lost ends after the grace period, by its jobs")
    func lostCompletion() throws {
        let events = script.deliveries(waves: waves, complete: false)
        let harness = played(events)
        #expect(harness.violations.isEmpty)
        let stored = try #require(harness.stored())
        #expect(stored.state == "ended")
        #expect(stored.content["state"] == "Succeeded")
        let final = try #require(harness.sent.first { $0.planned.kind == .finalFrame })
        let lastJob = script.start + 2 + 23 + 93 + 32
        #expect(final.at == lastJob + 120 + 5)
    }

    @Test("a newer run takes the card; when it ends, a run still going takes it back")
    func newestRunOwnsTheSlug() throws {
        var harness = BridgeHarness()
        let older = script
        let newer = RunScript(runID: 9_500, runNumber: 50, start: script.start + 10, firstJobID: 70_000)
        harness.feed(older.job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        harness.feed(newer.job(70_000, "build", "in_progress", createdAt: 10, startedAt: 11))
        // One activity: created for the first run, reused (a first frame, no create) by the next.
        let owners = harness.sent.filter { $0.planned.kind == .firstFrame }.map(\.planned.run.runID)
        #expect(owners == [9_000, 9_500])
        harness.feed(
            newer.job(
                70_000, "build", "completed", createdAt: 10, startedAt: 11, completedAt: 20, conclusion: "success"))
        harness.feed(newer.run("completed", at: 21, conclusion: "success"))
        harness.feed(older.job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        harness.feed(older.job(2, "test", "queued", createdAt: 60))
        #expect(harness.violations.isEmpty)
        let starts = harness.sent.filter { $0.planned.kind == .firstFrame }.map(\.planned.run.runID)
        #expect(starts == [9_000, 9_500, 9_000])
        let creates = harness.sent.filter { $0.planned.kind == .create }.map(\.planned.run.runID)
        #expect(creates == [9_000], "the activity PushWard holds is reused, never created again")
        #expect(harness.stored()?.state == "ongoing")
        #expect(harness.stored()?.content["subtitle"] == "widgets / CI")
    }

    @Test("a cancelled run with a newer run of the same workflow and branch reads 'Superseded by #N'")
    func superseded() throws {
        var engine = BridgeEngine()
        let older = script
        let newer = RunScript(runID: 9_500, runNumber: 50, start: script.start + 10, firstJobID: 70_000)
        _ = engine.receive(older.run("in_progress", at: 1), at: older.start)
        _ = engine.receive(newer.run("in_progress", at: 1), at: newer.start)
        _ = engine.receive(older.run("completed", at: 12, conclusion: "cancelled"), at: newer.start + 2)
        let state = try #require(engine.runs[RunKey(repository: "acme/widgets", runID: 9_000, attempt: 1)])
        #expect(engine.supersedingRunNumber(of: state) == 50)
        #expect(
            EndAppearance.forConclusion("cancelled", failedStep: nil, supersededBy: 50)
                == EndAppearance(state: "Superseded by #50", accentColor: "#8E8E93"))
    }

    @Test("a re-run of failed jobs keeps the steps that succeeded drawn complete, and names the attempt")
    func rerunFailedJobs() throws {
        let failing: [[RunScript.Job]] = [
            [RunScript.Job("build")], [RunScript.Job("test", conclusion: "failure")],
            [RunScript.Job("report", conclusion: "skipped")],
        ]
        var harness = BridgeHarness()
        harness.play(script.deliveries(waves: failing))
        let rerun = RunScript(attempt: 2, start: script.start + 600, firstJobID: 80_000)
        harness.feed(rerun.run("requested", at: 0))
        harness.feed(rerun.job(80_000, "test", "in_progress", createdAt: 1, startedAt: 2))
        #expect(harness.violations.isEmpty)
        let stored = try #require(harness.stored())
        #expect(stored.content["subtitle"] == "widgets / CI · attempt 2")
        #expect(stored.content["step_labels"] == ["build", "test", "report"])
        #expect(stored.content["current_step"] == 2)
        let plan = StepPlanner.plan(
            for: harness.engine.runs[RunKey(repository: "acme/widgets", runID: 9_000, attempt: 2)]!)
        #expect(plan.groups.map(\.isFinished) == [true, false, false])
    }

    @Test("a second run is seeded from the first: total_steps right from the first frame, weights from durations")
    func seededFromHistory() throws {
        var harness = BridgeHarness()
        harness.play(script.deliveries(waves: waves))
        let second = RunScript(runID: 9_001, runNumber: 43, start: script.start + 3_600, firstJobID: 60_000)
        harness.feed(second.run("requested", at: 0))
        #expect(harness.violations.isEmpty)
        let first = try #require(harness.sent.last { $0.planned.kind == .firstFrame }?.planned.request.body["content"])
        #expect(first["total_steps"] == 3)
        #expect(first["step_rows"] == [1, 2, 1])
        #expect(first["step_labels"] == ["lint", "build", "deploy"])
        #expect(first["step_weights"] == [20, 90, 30])
    }

    @Test("total_steps never decreases within an attempt, and progress never moves back")
    func monotonic() {
        let harness = played(script.deliveries(waves: waves))
        var lastTotal = 0
        var lastProgress = 0.0
        for content in harness.patchContents {
            if let total = content["total_steps"]?.intValue {
                #expect(total >= lastTotal)
                lastTotal = total
            }
            if let progress = content["progress"]?.doubleValue {
                #expect(progress >= lastProgress)
                lastProgress = progress
            }
        }
        #expect(lastProgress == 1)
    }

    @Test("a live window is sent only when the step changes, with the seconds still ahead")
    func liveWindowOnlyOnStepChange() throws {
        var harness = BridgeHarness()
        harness.play(script.deliveries(waves: waves))
        let second = RunScript(runID: 9_001, runNumber: 43, start: script.start + 3_600, firstJobID: 60_000)
        harness.play(second.deliveries(waves: waves))
        #expect(harness.violations.isEmpty)
        var acknowledgedStep: JSONValue?
        var windows = 0
        for output in harness.sent where output.planned.run.runID == 9_001 && output.planned.request.method == .patch {
            guard let content = output.planned.request.body["content"]?.objectValue else { continue }
            let step = content["current_step"] ?? acknowledgedStep
            if content["duration"] != nil {
                #expect(step != acknowledgedStep, "a window on an update that did not change the step")
                #expect(content["live_progress"] == true)
                windows += 1
            }
            acknowledgedStep = step
        }
        #expect(windows >= 2)
        // The build step started when the wave began: 90 s expected, sent when lint ended.
        let buildWindow = harness.sent.first {
            $0.planned.run.runID == 9_001 && $0.planned.request.body["content"]?["current_step"] == 2
                && $0.planned.request.body["content"]?["duration"] != nil
        }
        #expect(buildWindow?.planned.request.body["content"]?["duration"]?.intValue ?? 0 > 60)
    }

    @Test("a step with no estimate clears the window the previous step left")
    func windowClearedWithoutEstimate() {
        let desired = DesiredActivity(
            run: RunKey(repository: "a/b", runID: 1, attempt: 1), content: ["current_step": 3], window: nil,
            isFinal: false)
        let patch = Reconciler.windowPatch(
            desired: desired,
            acknowledged: ["current_step": 2, "live_progress": true, "end_date": 100, "start_date": 50],
            shownStep: 2, now: 60)
        #expect(patch == ["live_progress": .null, "end_date": .null, "start_date": .null])
        let unchanged = Reconciler.windowPatch(
            desired: desired, acknowledged: ["current_step": 3, "live_progress": true, "end_date": 100], shownStep: 3,
            now: 60)
        #expect(unchanged.isEmpty)
    }

    @Test("at most one PATCH per min_update_interval per slug, except end frames")
    func throttle() {
        let harness = played(script.deliveries(waves: waves))
        let patches = harness.sent.filter {
            $0.planned.request.method == .patch && ![.finalFrame, .end].contains($0.planned.kind)
        }
        for (earlier, later) in zip(patches, patches.dropFirst()) { #expect(later.at - earlier.at >= 1) }
    }

    @Test("a live card in its throttle window gets the full decision's wait without its content being built")
    func throttledShortcut() throws {
        var harness = BridgeHarness()
        harness.feed(script.job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        var engine = harness.engine
        let slug = try #require(engine.sessions.keys.first)
        let last = try #require(engine.sessions[slug]?.lastPatchAt)
        #expect(engine.sessions[slug]?.phase == .live)
        // A change inside the window: the card must wait for the window's end.
        _ = engine.receive(script.job(2, "test", "queued", createdAt: 1), at: last + 0.2)
        let now = last + 0.3
        let shortcut = try #require(engine.throttledUntil(slug: slug, at: now))
        #expect(shortcut == last + engine.settings.minUpdateInterval)
        let desired = try #require(engine.desired(slug: slug, at: now))
        let session = try #require(engine.sessions[slug])
        #expect(
            Reconciler.decide(session: session, desired: desired, settings: engine.settings, now: now)
                == .wait(until: shortcut))
        #expect(engine.decide(slug: slug, at: now) == .wait(until: shortcut))
        // At the window's end the full decision is taken, and it sends the change.
        #expect(engine.throttledUntil(slug: slug, at: shortcut) == nil)
        guard case .send(let planned) = engine.decide(slug: slug, at: shortcut) else {
            Issue.record("the change was not sent at the end of the window")
            return
        }
        #expect(planned.kind == .update)
    }

    @Test("wherever the throttle shortcut answers, the full decision sends nothing before its time")
    func throttledShortcutAgreesWithFullDecision() throws {
        // Two overlapping runs of one workflow: the second takes the card (a first frame owed)
        // while the first's frames are still inside their windows.
        let second = RunScript(runID: 9_001, runNumber: 43, start: script.start + 5, firstJobID: 60_000)
        let events = (script.deliveries(waves: waves) + second.deliveries(waves: waves)).sorted {
            (PayloadTime.of($0) ?? 0) < (PayloadTime.of($1) ?? 0)
        }
        var harness = BridgeHarness()
        var answered = 0
        for event in events {
            harness.feed(event)
            let engine = harness.engine
            let now = harness.session.clock
            for (slug, session) in engine.sessions {
                guard let shortcut = engine.throttledUntil(slug: slug, at: now) else { continue }
                answered += 1
                let owner = try #require(session.owner)
                let desired = try #require(engine.desired(slug: slug, at: now))
                let full = Reconciler.decide(session: session, desired: desired, settings: engine.settings, now: now)
                guard case .wait(var expected) = full else {
                    Issue.record("at \(now) the shortcut waits until \(shortcut) but the full decision is \(full)")
                    continue
                }
                if let completion = engine.runs[owner]?.completion {
                    expected = min(expected, completion.recognizedAt + engine.settings.endDelay)
                }
                // Never later than the full decision (which would delay a send); earlier only when the
                // card has nothing new (its heartbeat is later): the full decision is then taken at
                // the window's end and waits on.
                #expect(shortcut <= expected, "at \(now), phase \(session.phase)")
                #expect(shortcut == expected || shortcut == session.lastPatchAt! + engine.settings.minUpdateInterval)
            }
        }
        #expect(answered > 0, "the script never put a card inside its throttle window")
    }

    @Test("a burst of deliveries in one second becomes one follow-up PATCH")
    func burst() {
        var harness = BridgeHarness()
        harness.feed(script.job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        let before = harness.sent.count
        for id in 2...11 { harness.feed(script.job(id, "test (\(id))", "queued", createdAt: 1)) }
        #expect(harness.sent.count == before)
        harness.feed(script.job(1, "build", "in_progress", createdAt: 0, startedAt: 5))
        #expect(harness.sent.count == before + 1)
        #expect(harness.patchContents.last?["total_steps"] == 2)
        #expect(harness.patchContents.last?["step_rows"] == [1, 10])
    }

    @Test("a quiet run gets a heartbeat at half the stale TTL")
    func heartbeat() {
        var harness = BridgeHarness()
        harness.feed(script.job(1, "build", "in_progress", createdAt: 0, startedAt: 1))
        harness.feed(script.job(1, "build", "in_progress", createdAt: 0, startedAt: 1_000))
        let heartbeats = harness.sent.filter { $0.planned.kind == .heartbeat }
        #expect(heartbeats.count == 1)
        #expect(heartbeats.first?.planned.request.body == ["state": "ongoing"])
        #expect(heartbeats.first?.at == script.start + 1 + 900)
    }

    @Test("filters: a delivery filtered out is ignored with the reason")
    func filters() {
        var filter = DeliveryFilter()
        filter.branches.exclude = [GlobPattern("dependabot/*")]
        filter.repositories.include = [GlobPattern("acme/*")]
        var engine = BridgeEngine(filter: filter)
        let bot = RunScript(branch: "dependabot/npm")
        #expect(
            engine.receive(bot.job(1, "build", "queued", createdAt: 0), at: 0)
                == .ignored(reason: "branch dependabot/npm matches exclude pattern dependabot/*"))
        var other = RunScript()
        other.repository = Repository(fullName: "evil/corp", htmlURL: nil)
        #expect(
            engine.receive(other.job(1, "build", "queued", createdAt: 0), at: 0)
                == .ignored(reason: "repository evil/corp matches no include pattern"))
        #expect(engine.receive(script.job(1, "build", "queued", createdAt: 0), at: 0) != .ignored(reason: ""))
        #expect(engine.runs.count == 1)
    }

    @Test("ping warns when the hook lacks an event; other events are ignored, not errors")
    func pingAndUnsupported() {
        var engine = BridgeEngine()
        let partial = PingEvent(zen: "z", hookID: 1, events: ["workflow_run"], contentType: "json", repository: nil)
        if case .ping(let warning) = engine.receive(.ping(partial), at: 0) {
            #expect(warning?.contains("workflow_job") == true)
        } else {
            Issue.record("ping was not answered as a ping")
        }
        let all = PingEvent(zen: "z", hookID: 1, events: ["*"], contentType: "json", repository: nil)
        #expect(engine.receive(.ping(all), at: 0) == .ping(warning: nil))
        #expect(
            engine.receive(.unsupported(event: "check_run"), at: 0) == .ignored(reason: "unsupported event check_run"))
    }

    @Test("scope: repository uses gh- + 8 hex of SHA-256 of owner/repo; workflow scope gives each workflow its own")
    func identity() {
        let repository = Repository(fullName: "foo/webhook-testing", htmlURL: nil)
        let byRepository = ActivityIdentity.forRun(repository: repository, workflow: "Tests", scope: .repository)
        #expect(byRepository.slug == "gh-" + SHA256.hexDigest(of: "foo/webhook-testing").prefix(8))
        #expect(byRepository.name == "GitHub: webhook-testing")
        let tests = ActivityIdentity.forRun(repository: repository, workflow: "Tests", scope: .workflow)
        let lint = ActivityIdentity.forRun(repository: repository, workflow: "Lint", scope: .workflow)
        #expect(tests.slug != lint.slug)
        #expect(tests.slug.hasPrefix(byRepository.slug + "-"))
    }
}

@Suite("Contract clamps through the whole pipeline")
struct ClampTests {
    let script = RunScript()

    @Test("70 job groups, a 16-shard matrix and a 40-character job name pass the contract validator")
    func extremes() throws {
        let longName = String(repeating: "integration-suite-", count: 3).prefix(40)
        var waves: [[RunScript.Job]] = (0..<70).map { [RunScript.Job("group-\($0)", duration: 5)] }
        waves.append((1...16).map { RunScript.Job("shard (\($0))", duration: 10) })
        waves.append([RunScript.Job(String(longName), duration: 10)])
        var harness = BridgeHarness()
        harness.play(script.deliveries(waves: waves))
        #expect(harness.violations.isEmpty)
        let stored = try #require(harness.stored())
        #expect(stored.state == "ended")
        #expect(stored.content["total_steps"] == 64)
        #expect(stored.content["step_rows"]?.arrayValue?.count == 64)
        #expect(stored.content["step_rows"]?.arrayValue?.allSatisfy { ($0.intValue ?? 0) <= 10 } == true)
        #expect(stored.content["step_labels"]?.arrayValue?.last == "+9 more")
        let labels = harness.patchContents.compactMap { $0["step_labels"]?.arrayValue }.flatMap { $0 }
        #expect(labels.allSatisfy { ($0.stringValue?.count ?? 0) <= 32 })
    }

    @Test("a 40-character job name is cut to 32 characters with an ellipsis on the card")
    func longJobName() throws {
        let name = "build-and-publish-the-documentation-site"
        #expect(name.count == 40)
        var harness = BridgeHarness()
        harness.play(script.deliveries(waves: [[RunScript.Job(name, duration: 10)]]))
        #expect(harness.violations.isEmpty)
        let label = try #require(harness.stored()?.content["step_labels"]?.arrayValue?.first?.stringValue)
        #expect(label == String(name.prefix(31)) + "…")
        #expect(harness.stored()?.content["state"] == "Succeeded")
    }
}
