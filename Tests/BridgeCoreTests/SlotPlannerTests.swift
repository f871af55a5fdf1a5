import BridgeCore
import BridgeTestSupport
import Testing

/// Which of a person's runs hold PushWard's five ongoing cards: the ranking, the summary's slot,
/// and the rules that keep cards from evicting each other in turn.
@Suite("slot planner")
struct SlotPlannerTests {
    static func run(_ id: Int) -> RunKey { RunKey(repository: "acme/r\(id)", runID: id, attempt: 1) }

    static func candidate(
        _ id: Int, _ rank: SlotRank = .defaultBranch, holds: Bool = false, pinned: Bool = false,
        preempted: Bool = false, barred: Bool = false, finished: Bool = false
    ) -> SlotPlanner.Candidate {
        SlotPlanner.Candidate(
            run: run(id), rank: rank, startedAt: 1_700_000_000 + Double(id), holdsCard: holds, pinned: pinned,
            preempted: preempted, barred: barred, finished: finished)
    }

    @Test("up to five runs: each has a card and there is no summary")
    func fewRuns() {
        let plan = SlotPlanner.plan((1...5).map { Self.candidate($0) }, slots: 5)
        #expect(Set(plan.cards) == Set((1...5).map(Self.run)))
        #expect(plan.summary.isEmpty)
        #expect(!plan.showsSummary)
    }

    @Test("twelve at once: the failing, the waiting and the two newest default-branch runs, the summary the fifth")
    func twelveAtOnce() {
        // The failing run is the oldest of all and the waiting one the second oldest: age does not
        // decide for them. Runs 3–7 are off the default branch, 8–12 on it.
        var candidates = [Self.candidate(1, .failing), Self.candidate(2, .waiting)]
        candidates += (3...7).map { Self.candidate($0, .other) }
        candidates += (8...12).map { Self.candidate($0, .defaultBranch) }
        let plan = SlotPlanner.plan(candidates, slots: 5)
        #expect(plan.cards == [Self.run(1), Self.run(2), Self.run(12), Self.run(11)])
        #expect(plan.showsSummary)
        #expect(plan.summary.count == 8)
        #expect(plan.summary.first == Self.run(10))
        #expect(Set(plan.cards + plan.summary) == Set((1...12).map(Self.run)))
        #expect(plan.dropped.isEmpty)
    }

    @Test("the plan does not depend on the order runs are listed in")
    func orderIndependent() {
        var candidates = (1...12).map { Self.candidate($0, $0 % 4 == 0 ? .waiting : .other, holds: $0 % 3 == 0) }
        let first = SlotPlanner.plan(candidates, slots: 5)
        var generator = SplitMix64(seed: 42)
        for _ in 0..<20 {
            candidates.shuffle(using: &generator)
            #expect(SlotPlanner.plan(candidates, slots: 5) == first)
        }
    }

    @Test("a card shown keeps its slot against newer runs of its class, not against a higher class")
    func hysteresis() {
        let holders = (1...4).map { Self.candidate($0, .defaultBranch, holds: true) }
        let newer = (5...9).map { Self.candidate($0, .defaultBranch) }
        let plan = SlotPlanner.plan(holders + newer, slots: 5)
        #expect(Set(plan.cards) == Set((1...4).map(Self.run)))
        // A failing newcomer takes the slot of the weakest holder: the oldest of the lowest class.
        let failing = Self.candidate(10, .failing)
        let withFailure = SlotPlanner.plan(holders + newer + [failing], slots: 5)
        #expect(withFailure.cards.first == Self.run(10))
        #expect(!withFailure.cards.contains(Self.run(1)))
        #expect(withFailure.summary.contains(Self.run(1)))
    }

    @Test("a card showing its end frame keeps its slot whatever comes")
    func pinned() {
        let ending = (1...4).map { Self.candidate($0, .other, holds: true, pinned: true) }
        let plan = SlotPlanner.plan(ending + [Self.candidate(5, .failing), Self.candidate(6, .failing)], slots: 5)
        #expect(Set(plan.cards).isSuperset(of: Set((1...4).map(Self.run))))
        #expect(plan.cards.count == 4)
        #expect(Set(plan.summary) == [Self.run(5), Self.run(6)])
    }

    @Test("a preempted run is not restarted into a free slot, only in place of a held run it outranks; twice, never")
    func preempted() {
        let held = (1...2).map { Self.candidate($0, .defaultBranch, holds: true) }
        // A free slot (three runs, five slots): the preempted run still waits on the summary.
        let free = SlotPlanner.plan(held + [Self.candidate(3, .failing, preempted: true)], slots: 5)
        #expect(free.summary == [Self.run(3)])
        #expect(!free.cards.contains(Self.run(3)))
        // Every slot taken by runs it outranks: it comes back in place of the weakest.
        let full = (1...4).map { Self.candidate($0, .defaultBranch, holds: true) } + [Self.candidate(9, .other)]
        let back = SlotPlanner.plan(full + [Self.candidate(5, .failing, preempted: true)], slots: 5)
        #expect(back.cards.contains(Self.run(5)))
        #expect(!back.cards.contains(Self.run(1)))
        // Of the same class as the held runs: it stays on the summary.
        let same = SlotPlanner.plan(full + [Self.candidate(5, .defaultBranch, preempted: true)], slots: 5)
        #expect(!same.cards.contains(Self.run(5)))
        // Barred (preempted after its restart): never, however it ranks.
        let barred = SlotPlanner.plan(full + [Self.candidate(5, .failing, preempted: true, barred: true)], slots: 5)
        #expect(!barred.cards.contains(Self.run(5)))
        #expect(barred.summary.contains(Self.run(5)))
    }

    @Test("a run that finished without a card takes a slot nobody live wants, else it is dropped")
    func finishedWithoutCard() {
        let quiet = SlotPlanner.plan([Self.candidate(1), Self.candidate(2, finished: true)], slots: 5)
        #expect(Set(quiet.cards) == [Self.run(1), Self.run(2)])
        #expect(quiet.dropped.isEmpty)
        let busy = SlotPlanner.plan((1...6).map { Self.candidate($0) } + [Self.candidate(7, finished: true)], slots: 5)
        #expect(busy.dropped == [Self.run(7)])
        #expect(!busy.summary.contains(Self.run(7)))
    }

    @Test("with one slot the best run holds it and there is no summary beside it")
    func oneSlot() {
        let plan = SlotPlanner.plan([Self.candidate(1, .failing), Self.candidate(2), Self.candidate(3)], slots: 1)
        #expect(plan.cards == [Self.run(1)])
        #expect(plan.summary.count == 2)
    }

    @Test("priorities rise with the class, the summary above all, within PushWard's 0–10")
    func priorities() {
        for base in 0...10 {
            let values = SlotRank.allCases.map { $0.priority(base: base) }
            #expect(values == values.sorted())
            #expect(values.allSatisfy { (0...10).contains($0) })
            #expect(SlotRank.summaryPriority(base: base) >= values.max()!)
        }
        #expect(SlotRank.defaultBranch.priority(base: 1) == 1)
        #expect(
            [SlotRank.other, .defaultBranch, .waiting, .failing].map { $0.priority(base: 1) } == [0, 1, 2, 3])
        #expect(SlotRank.summaryPriority(base: 1) == 4)
    }
}
