import BridgeTestSupport
import Testing

@testable import BridgeCore

/// The monthly budget: which level each new run gets, on scripted months.
@Suite("Budget planner")
struct BudgetPlannerTests {
    static let run = RunKey(repository: "acme/widgets", runID: 1, attempt: 1)
    static let day: UnixTime = 86_400
    static let now: UnixTime = 1_700_000_000

    static func decide(
        used: Int, limit: Int?, runsPerDay: Double, daysLeft: Double, onCards: Int = 0,
        inForce: Fidelity? = nil, run: RunKey = run
    ) -> CardDecision {
        BudgetPlanner.decide(
            run: run, budget: PushBudget(used: used, limit: limit, resetsAt: now + daysLeft * day),
            arrivalsPerSecond: runsPerDay / day, runsHoldingActivities: onCards, inForce: inForce, at: now)
    }

    @Test("an unlimited account is drawn at full")
    func unlimited() {
        #expect(Self.decide(used: 10_000, limit: nil, runsPerDay: 500, daysLeft: 20).level == .full)
    }

    @Test("the richest level that fits: full, then steps, then milestones as the budget tightens")
    func levelsFollowTheBudget() {
        // 10 runs a day, 10 days left: 100 runs.
        #expect(Self.decide(used: 0, limit: 2_000, runsPerDay: 10, daysLeft: 10).level == .full)
        #expect(Self.decide(used: 0, limit: 1_100, runsPerDay: 10, daysLeft: 10).level == .steps)
        #expect(Self.decide(used: 0, limit: 600, runsPerDay: 10, daysLeft: 10).level == .milestones)
        let decision = Self.decide(used: 0, limit: 600, runsPerDay: 10, daysLeft: 10)
        #expect(decision.remaining == 600)
        #expect(decision.forecastRuns == 100)
        #expect(decision.reason.contains("100 runs forecast"))
    }

    @Test("runs on a card keep their end: two updates each are set aside")
    func reserveForRunsOnCards() {
        let decision = Self.decide(used: 90, limit: 100, runsPerDay: 1, daysLeft: 1, onCards: 3)
        #expect(decision.remaining == 4)
        #expect(decision.level == nil, "5 updates for a milestones run do not fit 4")
    }

    @Test("moving up to a richer level needs 20 % to spare; moving down does not wait")
    func hysteresis() {
        // 100 runs, 1,300 left: full (12) fits, but not with 20 % to spare (14.4).
        #expect(Self.decide(used: 0, limit: 1_300, runsPerDay: 10, daysLeft: 10, inForce: .steps).level == .steps)
        #expect(Self.decide(used: 0, limit: 1_500, runsPerDay: 10, daysLeft: 10, inForce: .steps).level == .full)
        #expect(Self.decide(used: 0, limit: 1_100, runsPerDay: 10, daysLeft: 10, inForce: .full).level == .steps)
    }

    @Test("when not even milestones fits every run, a stable share of runs gets a card, spread by run id")
    func rationing() {
        // 1,000 runs forecast, 1,000 updates: 1 a run, a fifth of a milestones run.
        let decisions = (1...2_000).map {
            Self.decide(
                used: 0, limit: 1_000, runsPerDay: 100, daysLeft: 10,
                run: RunKey(repository: "acme/widgets", runID: $0, attempt: 1))
        }
        let carded = decisions.filter { $0.level != nil }
        #expect(carded.allSatisfy { $0.level == .milestones })
        #expect((300...500).contains(carded.count), "\(carded.count) of 2000")
        #expect(decisions.filter { $0.level == nil }.allSatisfy { $0.reason.hasPrefix("no card") })
        // The same run always gets the same answer.
        #expect(
            decisions[7]
                == Self.decide(
                    used: 0, limit: 1_000, runsPerDay: 100, daysLeft: 10,
                    run: RunKey(repository: "acme/widgets", runID: 8, attempt: 1)))
    }

    @Test("arrivals: a rate over the days observed, blended with the prior, forgetting past 14 days")
    func arrivals() {
        var arrivals = RunArrivals()
        #expect(abs(arrivals.rate(at: Self.now, priorPerDay: 20) * Self.day - 20) < 0.001)
        for index in 0..<(10 * 14) { arrivals.record(at: Self.now + Double(index) * Self.day / 10) }
        let later = Self.now + 14 * Self.day
        // 140 runs over 14 days, plus 20 over one prior day: 160 / 15 ≈ 10.7 a day.
        #expect(abs(arrivals.rate(at: later, priorPerDay: 20) * Self.day - 160.0 / 15) < 0.2)
        arrivals.prune(at: later + 14 * Self.day)
        #expect(arrivals.perHour.isEmpty)
    }

    @Test("a free month of 250 updates and 300 runs: never spent before the reset, every carded run ends")
    func simulatedFreeMonth() throws {
        var settings = ActivitySettings()
        settings.fidelity = .auto
        var harness = BridgeHarness(settings: settings)
        let start = Self.now
        harness.setBudget(PushBudget(used: 0, limit: 250, resetsAt: start + 30 * Self.day))
        var runs: [RunKey] = []
        for index in 0..<300 {
            let script = RunScript(
                runID: 10_000 + index, runNumber: index + 1, start: start + Double(index) * 30 * Self.day / 300,
                firstJobID: 1_000_000 + index * 10)
            runs.append(RunKey(repository: script.repository.fullName, runID: script.runID, attempt: 1))
            harness.play(
                script.deliveries(waves: [
                    [RunScript.Job("build", duration: 60)], [RunScript.Job("test", duration: 120)],
                    [RunScript.Job("deploy", duration: 30)],
                ]))
        }
        #expect(harness.violations.isEmpty)
        // Deletions of ended activities are requests, not updates: PushWard charges none.
        let updates = harness.sent.filter { $0.planned.kind != .delete }.count
        #expect(updates <= 250, "\(updates) updates spent")
        let engine = harness.engine
        let carded = runs.filter { engine.runs[$0]?.cardDecision?.level != nil }
        let skipped = runs.filter { engine.runs[$0]?.cardDecision.map { $0.level == nil } ?? false }
        #expect(carded.count >= 30, "only \(carded.count) runs drew a card")
        #expect(carded.count + skipped.count == 300, "every run has a recorded decision")
        for run in carded {
            #expect(harness.sent.contains { $0.planned.run == run && $0.planned.kind == .end }, "\(run) never ended")
        }
        for run in skipped {
            #expect(!harness.sent.contains { $0.planned.run == run }, "\(run) was skipped but sent")
        }
    }
}
