import BridgeCore
import BridgeTestSupport
import Testing

/// The engine with PushWard's five ongoing cards per person: twelve repositories live at once,
/// the summary card, priorities that make PushWard's eviction agree, preempted cards read back.
@Suite("slots in the engine")
struct SlotEngineTests {
    static let base: UnixTime = 1_700_000_000

    /// PushWard's per-person limit as documented: a sixth card going ongoing evicts the
    /// lowest-priority, then the longest ongoing, one (`preempted`); a PATCH to a preempted card
    /// must say its state. Everything else is `InMemoryPushWard` (contract-checked).
    struct EvictingPushWard {
        var server = InMemoryPushWard()
        var ongoingSince: [String: UnixTime] = [:]
        var preempted: Set<String> = []
        var evicted: [String] = []
        var cap = 5
        /// Requests refused with a 400 whatever they say, to test what follows a refusal.
        var refuses: (@Sendable (PushWardRequest) -> Bool)?

        mutating func answer(_ request: PushWardRequest, at now: UnixTime) -> PushWardAnswer {
            let slug = request.slug
            if refuses?(request) == true {
                return .problem(
                    PushWardProblem(status: 400, code: "request.body_invalid", detail: "refused by the test"))
            }
            if request.method == .patch, preempted.contains(slug), request.body["state"] == nil {
                return .problem(PushWardProblem(status: 400, code: "activity.state_invalid", detail: "preempted"))
            }
            let status = server.handle(request, at: now)
            guard status < 300 else {
                return .problem(PushWardProblem(status: status, detail: "\(server.violations.suffix(1))"))
            }
            if request.body["state"] != nil { preempted.remove(slug) }
            if server.activities[slug]?.state == "ongoing" && !preempted.contains(slug) {
                if ongoingSince[slug] == nil { ongoingSince[slug] = now }
                while ongoingSince.count > cap {
                    let victim = ongoingSince.min { lhs, rhs in
                        let left = (server.activities[lhs.key]?.priority ?? 0, lhs.value, lhs.key)
                        let right = (server.activities[rhs.key]?.priority ?? 0, rhs.value, rhs.key)
                        return left < right
                    }!.key
                    ongoingSince[victim] = nil
                    preempted.insert(victim)
                    evicted.append(victim)
                }
            } else {
                ongoingSince[slug] = nil
            }
            return .success(
                status: status, state: preempted.contains(slug) ? "preempted" : server.activities[slug]?.state)
        }

        var ongoing: Set<String> { Set(ongoingSince.keys) }
    }

    /// Drives an engine against `EvictingPushWard` a second at a time, the way the dispatcher does.
    struct Harness {
        var engine: BridgeEngine
        var pushward = EvictingPushWard()
        var now: UnixTime = SlotEngineTests.base
        var refused: [String] = []
        /// Cards PushWard evicted while the bridge still gave their run a slot.
        var againstPlan: [String] = []

        init(settings: ActivitySettings = ActivitySettings(), routing: RoutingSettings = RoutingSettings()) {
            engine = BridgeEngine(configuration: EngineConfiguration(settings: settings, routing: routing))
        }

        mutating func deliver(_ events: [WebhookEvent]) {
            for event in events { _ = engine.receive(event, at: now) }
            pump()
        }

        mutating func advance(to time: UnixTime) {
            while now < time {
                now += 1
                pump()
            }
        }

        mutating func pump() {
            for _ in 0..<20 {
                if engine.wantsPreemptedCheck { engine.observePreempted(pushward.preempted, at: now) }
                let due = engine.dueRequests(at: now, inFlight: [])
                guard !due.isEmpty else { return }
                let holders = engine.slotHolders()
                for planned in due {
                    let answer = pushward.answer(planned.request, at: now)
                    for victim in pushward.evicted {
                        if SummaryCard.isSummary(victim) || engine.sessions[victim]?.owner.map(holders.contains) == true
                        {
                            againstPlan.append(victim)
                        }
                    }
                    pushward.evicted.removeAll()
                    if case .problem(let problem) = answer {
                        refused.append(planned.request.slug + ": " + problem.summary)
                    }
                    _ = engine.handle(answer, for: planned, at: now, jitter: 0)
                }
            }
        }

        func slug(of run: RunScript) -> String? {
            engine.slugs[RunKey(repository: run.repository.fullName, runID: run.runID, attempt: 1)]
        }
    }

    static func script(_ index: Int, branch: String, workflow: String = "CI", repository: String? = nil) -> RunScript {
        var script = RunScript(
            runID: 1_000 + index, workflow: workflow, branch: branch, start: base + Double(index),
            firstJobID: 50_000 + index * 10)
        let name = repository ?? "acme/repo-\(index)"
        script.repository = Repository(
            fullName: name, htmlURL: "https://github.com/acme/repo-\(index)", defaultBranch: "main")
        return script
    }

    static func starting(_ script: RunScript) -> [WebhookEvent] {
        [
            script.run("in_progress", at: 0),
            script.job(script.firstJobID, "build", "in_progress", createdAt: 0, startedAt: 0),
            script.job(script.firstJobID + 1, "lint", "in_progress", createdAt: 0, startedAt: 0),
        ]
    }

    static func finishing(_ script: RunScript, at offset: Double) -> [WebhookEvent] {
        [
            script.job(
                script.firstJobID + 1, "lint", "completed", createdAt: 0, startedAt: 0, completedAt: offset,
                conclusion: "success"),
            script.job(
                script.firstJobID, "build", "completed", createdAt: 0, startedAt: 0, completedAt: offset,
                conclusion: "success"),
            script.run("completed", at: offset, conclusion: "success"),
        ]
    }

    @Test(
        "twelve repositories live at once: the failing and the waiting runs are among the five, the rest on the summary"
    )
    func twelveRepositories() throws {
        var harness = Harness()
        // Runs 1–7 off the default branch, 8–12 on it; one a second. Run 12's names are hostile.
        let scripts = (1...12).map { index in
            index == 12
                ? Self.script(
                    12, branch: "main", workflow: "CI \u{202E}gnp.exe\u{0000} 🚀" + String(repeating: "é", count: 300),
                    repository: "acme/\u{202E}evil\u{2066}repo\u{0007}👩🏽‍💻")
                : Self.script(index, branch: index <= 7 ? "feature" : "main")
        }
        for script in scripts {
            harness.advance(to: script.start)
            harness.deliver(Self.starting(script))
        }
        // Run 2 waits for approval, then run 1's build fails (its lint still goes).
        harness.advance(to: Self.base + 20)
        harness.deliver([
            scripts[1].job(scripts[1].firstJobID + 2, "deploy", "waiting", createdAt: 20, environment: "production")
        ])
        harness.advance(to: Self.base + 30)
        harness.deliver([
            scripts[0].job(
                scripts[0].firstJobID, "build", "completed", createdAt: 0, startedAt: 0, completedAt: 30,
                conclusion: "failure")
        ])
        harness.advance(to: Self.base + 90)

        // The peak: five ongoing cards, the summary one of them, the failing and the waiting runs
        // among the others, and the rest default-branch runs.
        let ongoing = harness.pushward.ongoing
        let summarySlug = SummaryCard.slug(person: "")
        #expect(ongoing.count == 5)
        #expect(ongoing.contains(summarySlug))
        #expect(ongoing.contains(try #require(harness.slug(of: scripts[0]))))
        #expect(ongoing.contains(try #require(harness.slug(of: scripts[1]))))
        let holders = harness.engine.slotHolders()
        #expect(holders.count == 4)
        for key in holders {
            #expect(harness.engine.runs[key]?.headBranch == "main" || [1_001, 1_002].contains(key.runID))
            #expect(ongoing.contains(try #require(harness.engine.slugs[key])))
        }
        // Every run is on a card or on the summary, and the summary counts the eight without one.
        let summary = harness.engine.summaryRuns()
        #expect(Set(summary).union(holders).count == 12)
        #expect(Set(summary).isDisjoint(with: holders))
        let content = try #require(harness.pushward.server.activities[summarySlug]?.content)
        #expect(content["subtitle"] == "+8 more runs")
        #expect(content["template"] == "generic")
        #expect(content["url"] != nil)
        for key in summary {
            let placement = try #require(harness.engine.runs[key]?.placement)
            #expect([.summary, .preempted].contains(placement.place))
        }
        // Nothing refused, nothing evicted against the plan, each card preempted at most once.
        #expect(harness.refused == [])
        #expect(harness.againstPlan == [])
        #expect(harness.pushward.server.violations == [])
        for state in harness.engine.runs.values {
            #expect((state.placement?.preemptions ?? 0) <= 1)
        }
        // The failing run was preempted early (it was the oldest) and restarted once it failed.
        let failing = try #require(harness.engine.runs[RunKey(repository: "acme/repo-1", runID: 1_001, attempt: 1)])
        #expect(failing.placement?.place == .card)
        #expect(failing.placement?.preemptedAt != nil)
        #expect(failing.placement?.restartedAt != nil)
        #expect(harness.pushward.server.activities[harness.slug(of: scripts[0])!]?.priority == 3)

        // Everything ends: every card ends on PushWard, preempted ones with an explicit state, and
        // the summary last.
        for script in scripts { harness.deliver(Self.finishing(script, at: 100 - Double(script.start - Self.base))) }
        harness.advance(to: Self.base + 400)
        #expect(harness.pushward.ongoing.isEmpty)
        #expect(harness.pushward.server.activities.values.allSatisfy { $0.state == "ended" })
        #expect(harness.refused == [])
        #expect(harness.againstPlan == [])
        #expect(harness.engine.summaryRuns().isEmpty)
    }

    @Test("hostile repository and workflow names land on the summary as one plain line within the limit")
    func hostileNamesOnTheSummary() throws {
        var harness = Harness()
        for index in 1...5 {
            harness.advance(to: Self.base + Double(index))
            harness.deliver(Self.starting(Self.script(index, branch: "main")))
        }
        let hostile = Self.script(
            6, branch: "feature", workflow: "CI\u{202E}\u{0000}\u{2028}" + String(repeating: "🚀", count: 400),
            repository: "acme/\u{202E}evil\u{2067}repo\u{0000}")
        harness.advance(to: Self.base + 6)
        harness.deliver(Self.starting(hostile))
        harness.advance(to: Self.base + 60)
        let content = try #require(harness.pushward.server.activities[SummaryCard.slug(person: "")]?.content)
        let state = try #require(content["state"]?.stringValue)
        #expect(state.hasPrefix("Newest: "))
        #expect(state.unicodeScalars.count <= 256, "PushWard counts scalars, not characters")
        let forbidden: Set<UInt32> = [0x202E, 0x2067, 0x0000, 0x2028]
        #expect(!state.unicodeScalars.contains { forbidden.contains($0.value) })
        // Six runs, five slots: four run cards and the summary, which counts two.
        #expect(content["subtitle"] == "+2 more runs")
        #expect(harness.pushward.server.violations == [])
        #expect(harness.refused == [])
    }

    @Test("a card restarted after its preemption keeps its slot: runs that outrank it never preempt it a second time")
    func restartedCardKeepsItsSlot() throws {
        var harness = Harness()
        // Run 1 off the default branch, then five on it: run 1 is preempted for the summary.
        let first = Self.script(1, branch: "feature")
        harness.advance(to: first.start)
        harness.deliver(Self.starting(first))
        for index in 2...6 {
            let script = Self.script(index, branch: "main")
            harness.advance(to: script.start)
            harness.deliver(Self.starting(script))
        }
        harness.advance(to: Self.base + 20)
        let key = RunKey(repository: first.repository.fullName, runID: first.runID, attempt: 1)
        #expect(harness.engine.runs[key]?.placement?.preemptedAt != nil, "the oldest, off main, gave up its card")
        // Run 1 waits for approval: it outranks the default branch's cards and is restarted.
        harness.deliver([
            first.job(first.firstJobID + 2, "deploy", "waiting", createdAt: 20, environment: "production")
        ])
        harness.advance(to: Self.base + 40)
        #expect(harness.engine.runs[key]?.placement?.restartedAt != nil)
        // Four newer runs fail: they outrank it, and by rank and age would take all four run
        // slots; it keeps its slot, and the fourth failing run is counted on the summary.
        for index in 7...10 {
            let script = Self.script(index, branch: "main")
            harness.advance(to: Self.base + 40 + Double(index))
            harness.deliver(
                Self.starting(script) + [
                    script.job(
                        script.firstJobID, "build", "completed", createdAt: 0, startedAt: 0, completedAt: 1,
                        conclusion: "failure")
                ])
        }
        harness.advance(to: Self.base + 120)
        #expect(harness.engine.runs[key]?.placement?.place == .card)
        #expect(harness.engine.runs[key]?.placement?.preemptions == 1)
        #expect(harness.pushward.ongoing.contains(try #require(harness.slug(of: first))))
        #expect(harness.engine.summaryRuns().count == 6, "the fourth failing run and five default-branch runs")
        #expect(harness.pushward.evicted.isEmpty)
        #expect(harness.refused == [])
        #expect(harness.againstPlan == [])
        for state in harness.engine.runs.values { #expect((state.placement?.preemptions ?? 0) <= 1) }
    }

    @Test("a burst of runs without a card costs the summary a few updates, not one per delivery")
    func summaryIsCoalesced() throws {
        var harness = Harness()
        for index in 1...30 {
            harness.advance(to: Self.base + Double(index))
            harness.deliver(Self.starting(Self.script(index, branch: "main")))
        }
        harness.advance(to: Self.base + 120)
        let session = try #require(harness.engine.sessions[SummaryCard.slug(person: "")])
        // 25 runs joined the summary one a second: a create, a first frame, and coalesced updates.
        #expect((session.totalUpdates ?? 0) <= 6)
        let content = try #require(harness.pushward.server.activities[SummaryCard.slug(person: "")]?.content)
        #expect(content["subtitle"] == "+26 more runs")
        #expect(harness.refused == [])
    }

    @Test("a card PushWard preempted is never patched without a state; its run's end ends it explicitly")
    func preemptedByAnotherIntegration() throws {
        var harness = Harness()
        let script = Self.script(1, branch: "main")
        harness.deliver(Self.starting(script))
        harness.advance(to: Self.base + 5)
        let slug = try #require(harness.slug(of: script))
        #expect(harness.pushward.ongoing.contains(slug))
        // Another integration's five cards of higher priority evict it.
        harness.pushward.ongoingSince[slug] = nil
        harness.pushward.preempted.insert(slug)
        harness.engine.observePreempted([slug, "someone-elses-card"], at: harness.now)
        let key = RunKey(repository: script.repository.fullName, runID: script.runID, attempt: 1)
        #expect(harness.engine.runs[key]?.placement?.place == .preempted)
        #expect(harness.engine.runs[key]?.placement?.preemptedAt == harness.now)
        // Changes of the run send nothing (it is alone: a free slot is no reason to restart it).
        harness.deliver([
            script.job(
                script.firstJobID + 1, "lint", "completed", createdAt: 0, startedAt: 0, completedAt: 8,
                conclusion: "success")
        ])
        harness.advance(to: Self.base + 40)
        #expect(harness.refused == [])
        #expect(harness.pushward.preempted.contains(slug))
        #expect(harness.engine.summaryRuns() == [key])
        // The run's end: one PATCH with `state: ended`; refused, it is not sent again.
        var refusing = harness
        refusing.pushward.refuses = { [slug] in $0.slug == slug && $0.body == ["state": "ended"] }
        refusing.deliver(Self.finishing(script, at: 50))
        refusing.advance(to: Self.base + 120)
        #expect(refusing.refused.count == 1, "\(refusing.refused)")
        // Accepted, the card is ended on PushWard.
        harness.deliver(Self.finishing(script, at: 50))
        harness.advance(to: Self.base + 120)
        #expect(harness.refused == [])
        #expect(harness.pushward.server.activities[slug]?.state == "ended")
        #expect(!harness.pushward.preempted.contains(slug))
    }

    @Test("each routed person has five slots and a summary card of their own, reaching only them")
    func routedPeople() throws {
        var harness = Harness(routing: RoutingSettings(members: ["octocat": "usr_1", "hubot": "usr_2"]))
        // Per person on PushWard; this model counts one person, so it must not evict here.
        harness.pushward.cap = 100
        for index in 1...12 {
            var script = Self.script(index, branch: "main")
            script.actor = index % 2 == 0 ? "octocat" : "hubot"
            harness.advance(to: script.start)
            harness.deliver(Self.starting(script))
        }
        harness.advance(to: Self.base + 60)
        for (person, member) in [("octocat", "usr_1"), ("hubot", "usr_2")] {
            #expect(harness.engine.slotHolders(person: person).count == 4)
            #expect(harness.engine.summaryRuns(person: person).count == 2)
            let slug = SummaryCard.slug(person: person)
            #expect(slug != SummaryCard.slug(person: ""))
            #expect(harness.engine.sessions[slug]?.identity.target == ActivityTarget(members: [member]))
            #expect(harness.pushward.server.activities[slug]?.content["subtitle"] == "+2 more runs")
        }
        #expect(harness.engine.summaryRuns().isEmpty, "nothing is the account's")
        #expect(harness.refused == [])
    }
}
