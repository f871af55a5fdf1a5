import BridgeTestSupport
import Testing

@testable import BridgeCore

/// What a card costs: coalescing, the fidelity levels and the hourly cap, on scripted timelines
/// played through the core with a simulated clock and the contract-enforcing in-memory PushWard.
@Suite("Push economy")
struct PushEconomyTests {
    static let script = RunScript()

    /// A run of `groups` job groups, one job each, `duration` seconds apart.
    static func linear(_ groups: Int, duration: Double = 40, failAt: Int? = nil) -> [WebhookEvent] {
        script.deliveries(
            waves: (0..<groups).map { index in
                [
                    RunScript.Job(
                        "step \(index + 1)", duration: duration, conclusion: index == failAt ? "failure" : "success")
                ]
            })
    }

    /// A 16-shard test matrix between a build and a report.
    static let matrix: [WebhookEvent] = script.deliveries(waves: [
        [RunScript.Job("build", duration: 60)],
        (1...16).map { RunScript.Job("test (\($0)/16)", duration: 60 + Double($0) * 7) },
        [RunScript.Job("report", duration: 20)],
    ])

    static func settings(_ fidelity: Fidelity, coalesce: Double = 10, cap: Int = 3_600) -> ActivitySettings {
        var settings = ActivitySettings()
        settings.fidelity = fidelity
        settings.coalesce = coalesce
        settings.maxUpdatesPerHour = cap
        return settings
    }

    static func played(_ events: [WebhookEvent], _ settings: ActivitySettings) -> BridgeHarness {
        var harness = BridgeHarness(settings: settings)
        harness.play(events)
        return harness
    }

    /// What a phone shows at the end: the state and the content (a level's POST may carry other TTLs).
    static func finalCard(_ harness: BridgeHarness) -> [String: JSONValue]? {
        harness.stored().map { ["state": .string($0.state), "content": .object($0.content)] }
    }

    /// Requests PushWard charges for: every POST and PATCH.
    static func updates(_ harness: BridgeHarness) -> Int { harness.sent.count }

    /// The most requests of any rolling hour.
    static func busiestHour(_ harness: BridgeHarness) -> Int {
        let times = harness.sent.map(\.at)
        return times.map { start in times.filter { $0 >= start && $0 < start + 3_600 }.count }.max() ?? 0
    }

    // MARK: Coalescing

    @Test("at full, a job's completion and the next group's start two seconds later go as one update")
    func completionAndNextStartMerge() throws {
        // Two groups: when `step 1` completes (a step change), `step 2` is queued, then starts 2 s later.
        let events = Self.linear(2)
        let coalesced = Self.played(events, Self.settings(.full))
        let eager = Self.played(events, .pushingEveryChange)
        #expect(coalesced.violations.isEmpty)
        #expect(Self.updates(coalesced) < Self.updates(eager))
        // The update that moved to step 2 already says it is running (its start was merged in).
        let moved = try #require(
            coalesced.sent.first {
                $0.planned.request.body["content"]?["current_step"] == 2 && $0.planned.kind == .update
            })
        #expect(moved.planned.request.body["content"]?["state"] == "Step 2")
        #expect(Self.finalCard(coalesced) == Self.finalCard(eager))
    }

    @Test("a step change waits at most the settle window; a change inside a step waits coalesce, then goes")
    func settleAndCoalesceWindows() throws {
        var harness = BridgeHarness(settings: Self.settings(.full))
        let script = Self.script
        harness.feed(script.run("requested", at: 0))
        harness.feed(script.job(1, "build", "queued", createdAt: 1))
        harness.feed(script.job(2, "build (2)", "queued", createdAt: 1))
        harness.feed(script.job(1, "build", "in_progress", createdAt: 1, startedAt: 100))
        // The step change (the first job started) goes once its settle window closed: by the time
        // the second job starts, 50 s later, it is out, 3 s after it was seen.
        harness.feed(script.job(2, "build (2)", "in_progress", createdAt: 1, startedAt: 150))
        let stepChange = try #require(harness.sent.last)
        #expect(stepChange.planned.request.body["content"]?["current_step"] == 1)
        #expect(stepChange.at == script.start + 100 + 3)
        let started = harness.sent.count
        // A change inside the step (one of two parallel jobs finished) at t = 200.
        harness.feed(
            script.job(1, "build", "completed", createdAt: 1, startedAt: 100, completedAt: 200, conclusion: "success"))
        #expect(harness.sent.count == started, "a change inside a step went out at once")
        // Nothing else comes: it goes when its coalesce window closes (the next delivery lets time run).
        harness.feed(script.job(3, "later", "queued", createdAt: 260))
        let minor = try #require(harness.sent.dropFirst(started).first)
        #expect(minor.at == script.start + 200 + 10)
        #expect(minor.planned.request.body["content"]?["state"] == "Build 1/2")
    }

    @Test("the first failure goes at once at every level, even milestones")
    func firstFailureIsNeverHeld() throws {
        for level in Fidelity.concrete {
            let harness = Self.played(Self.linear(5, failAt: 1), Self.settings(level))
            #expect(harness.violations.isEmpty, "\(level)")
            let failedAt = Self.script.start + 2 + 43 + 2 + 40
            let red = try #require(
                harness.sent.first { output in
                    output.planned.request.body["content"]?["step_colors"]?.arrayValue?.contains("red") ?? false
                }, "\(level)")
            #expect(red.at <= failedAt + 1, "\(level): the failure waited \(red.at - failedAt) s")
        }
    }

    // MARK: Levels

    @Test(
        "steps stays at the lower bound, full within half the steps over it, milestones at 5; one final card",
        arguments: [3, 6, 12, 40])
    func levelsStayWithinTheirCosts(groups: Int) throws {
        let events = Self.linear(groups)
        let lowerBound = groups + 4
        let reference = Self.finalCard(Self.played(events, .pushingEveryChange))
        var costs: [Fidelity: Int] = [:]
        for level in Fidelity.concrete {
            let harness = Self.played(events, Self.settings(level))
            #expect(harness.violations.isEmpty, "\(level): \(harness.violations)")
            costs[level] = Self.updates(harness)
            #expect(Self.finalCard(harness) == reference, "\(level) ends on another card")
            #expect(harness.sent.last?.planned.kind == .end)
        }
        #expect(costs[.steps]! <= lowerBound, "\(costs)")
        #expect(costs[.full]! <= lowerBound + groups / 2, "\(costs)")
        #expect(costs[.milestones]! <= 5, "\(costs)")
        #expect(costs[.milestones]! <= costs[.steps]! && costs[.steps]! <= costs[.full]!)
    }

    @Test("a 16-shard matrix: each shard finishing no longer costs an update at steps, and few at full")
    func matrixShards() throws {
        let eager = Self.updates(Self.played(Self.matrix, .pushingEveryChange))
        let full = Self.played(Self.matrix, Self.settings(.full))
        let steps = Self.played(Self.matrix, Self.settings(.steps))
        #expect(full.violations.isEmpty && steps.violations.isEmpty)
        #expect(Self.updates(steps) <= 3 + 4)
        #expect(Self.updates(full) <= 3 + 4 + 3 / 2)
        #expect(Self.updates(full) < eager)
        #expect(Self.finalCard(full) == Self.finalCard(steps))
    }

    @Test("at steps, each step change carries its live window and nothing between step changes goes")
    func stepsLevelSendsStepChanges() throws {
        // History first, so steps have estimates (and so live windows).
        var harness = BridgeHarness(settings: Self.settings(.steps))
        harness.play(Self.linear(4))
        let second = RunScript(runID: 9_001, runNumber: 43, start: Self.script.start + 7_200, firstJobID: 60_000)
        let before = harness.sent.count
        harness.play(second.deliveries(waves: (0..<4).map { [RunScript.Job("step \($0 + 1)", duration: 40)] }))
        #expect(harness.violations.isEmpty)
        let updates = harness.sent.dropFirst(before).filter { $0.planned.kind == .update }
        #expect(!updates.isEmpty)
        for update in updates {
            let content = try #require(update.planned.request.body["content"]?.objectValue)
            #expect(content["current_step"] != nil, "an update at steps that is not a step change: \(content)")
            #expect(content["live_progress"] == true || content["live_progress"] == .null)
        }
    }

    @Test("a held change rides along with the heartbeat when nothing else goes")
    func heartbeatCarriesHeldContent() throws {
        var settings = Self.settings(.steps)
        settings.staleTTL = 600
        var harness = BridgeHarness(settings: settings)
        let script = Self.script
        harness.feed(script.run("requested", at: 0))
        harness.feed(script.job(1, "build", "queued", createdAt: 1))
        harness.feed(script.job(2, "build (2)", "queued", createdAt: 1))
        harness.feed(script.job(1, "build", "in_progress", createdAt: 1, startedAt: 10))
        harness.feed(script.job(2, "build (2)", "in_progress", createdAt: 1, startedAt: 11))
        // Inside the step, below what `steps` pushes: held.
        harness.feed(
            script.job(1, "build", "completed", createdAt: 1, startedAt: 10, completedAt: 40, conclusion: "success"))
        let before = harness.sent.count
        let lastMoved = try #require(harness.sent.last?.at)
        // Much later: the heartbeat (half of stale_ttl after the last update) carries the held count.
        harness.feed(script.job(3, "deploy", "queued", createdAt: 1_000))
        let carried = try #require(harness.sent.dropFirst(before).first)
        #expect(carried.planned.request.body["content"]?["state"] == "Build 1/2")
        #expect(carried.at == lastMoved + 300)
    }

    @Test("at milestones a long run costs at most 5: its card is created with a stale_ttl that needs no heartbeat")
    func milestonesOnALongRun() throws {
        let harness = Self.played(Self.linear(65, duration: 30), Self.settings(.milestones))
        #expect(harness.violations.isEmpty)
        #expect(Self.updates(harness) <= 5)
        let post = try #require(harness.sent.first?.planned.request.body)
        #expect(post["stale_ttl"] == .number(4 * 3_600))
    }

    // MARK: The hourly cap

    @Test("no card gets more than max_updates_per_hour in any rolling hour, and the end still goes")
    func hourlyCap() throws {
        // 40 steps of 40 s: about 45 minutes of steps, far more step changes than 15 an hour.
        let events = Self.linear(40)
        let reference = Self.finalCard(Self.played(events, .pushingEveryChange))
        for cap in [6, 15] {
            let harness = Self.played(events, Self.settings(.full, cap: cap))
            #expect(harness.violations.isEmpty)
            #expect(Self.busiestHour(harness) <= cap, "cap \(cap): \(Self.busiestHour(harness))")
            let kinds = harness.sent.map(\.planned.kind)
            #expect(kinds.suffix(2) == [.finalFrame, .end], "cap \(cap)")
            #expect(Self.finalCard(harness) == reference, "cap \(cap) ends on another card")
        }
    }

    @Test("the cap keeps two requests for the end: a run that spent its hour still ends at once")
    func capReservesTheEnd() throws {
        let harness = Self.played(Self.linear(20, duration: 20), Self.settings(.full, coalesce: 0, cap: 8))
        let final = try #require(harness.sent.first { $0.planned.kind == .finalFrame })
        let completed = try #require(harness.engine.runs.values.first?.completion?.recognizedAt)
        #expect(final.at == completed + harness.engine.settings.endDelay)
        #expect(Self.busiestHour(harness) <= 8)
    }

    // MARK: Order

    @Test("with the economy on, shuffled and duplicated deliveries still end on the same card")
    func orderIndependence() throws {
        let events = Self.matrix
        let reference = Self.finalCard(Self.played(events, Self.settings(.steps)))
        var generator = SplitMix64(seed: 7)
        for _ in 0..<20 {
            var shuffled = events + events.prefix(5)
            shuffled.shuffle(using: &generator)
            #expect(Self.finalCard(Self.played(shuffled, Self.settings(.steps))) == reference)
        }
    }
}
